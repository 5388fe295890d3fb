// @vitest-environment happy-dom
// Issue 21 item 8: stop is one thing. However the user stops a reply (useChat's `stop()`,
// the session's `stop()`, `useDurableChat`'s `stop()`, `transport.stop(chatId)`), the AI SDK
// hears the same: `onFinish({ isAbort: true })`, status ready, no error. The README's save
// rule (save only when `!isAbort`) then treats every stop alike.
import { waitFor as waitForDom } from '@testing-library/react';
import type { UIMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PersistedChatRecord } from '../../src/client/persistence.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { createTransport, TestChat } from '../transport/support/dev-server-fixture.js';
import { chatOptions, mountChat, nextChatId, nodeFetch, startEchoServer } from './support/harness.js';
import { mountPlainChat, sessionOptions } from './support/plain-harness.js';

let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer();
});
afterAll(async () => {
  await server.close();
});

interface Finish {
  isAbort: boolean;
  isError: boolean;
}

const slow = { delayMs: 20, repeat: 40 };
const TEXT = 'stop me';
const started = (messages: readonly UIMessage[]) => {
  const last = messages.at(-1);
  return (
    last?.role === 'assistant' && last.parts.some((part) => part.type === 'text' && part.text.length > 8)
  );
};
const stopAppended = (requests: { path: string; body: string | undefined }[]) =>
  requests.filter((request) => request.path.endsWith('/in/append') && request.body?.includes('"stop"'));

/** `nodeFetch` noting every append (the network stays real). */
function appendRecorder() {
  const requests: { path: string; body: string | undefined }[] = [];
  const fetch: typeof globalThis.fetch = (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    requests.push({ path: url.pathname, body: typeof init?.body === 'string' ? init.body : undefined });
    return nodeFetch(input, init);
  };
  return { fetch, requests };
}

describe('issue 21 item 8: every stop path reports isAbort to the AI SDK', () => {
  for (const how of ['chat.stop()', 'session.stop()'] as const) {
    it(`useChat + useChatSession, ${how} mid-reply: onFinish({ isAbort: true }) once, ready, no error, the agent stopped`, async () => {
      const finishes: Finish[] = [];
      const errors: unknown[] = [];
      const recorder = appendRecorder();
      const page = mountPlainChat({
        session: sessionOptions(server, nextChatId('plain-stop'), undefined, {
          clientData: slow,
          fetch: recorder.fetch,
        }),
        chat: {
          onFinish: ({ isAbort, isError }) => finishes.push({ isAbort, isError }),
          onError: (error) => errors.push(error),
        },
      });
      void page.chat.sendMessage({ text: TEXT });
      await waitForDom(() => expect(started(page.chat.messages as UIMessage[])).toBe(true), {
        timeout: 5_000,
      });
      if (how === 'chat.stop()') void page.chat.stop();
      else await page.session.stop();
      await waitForDom(() => expect(finishes).toHaveLength(1));
      await waitForDom(() => expect(stopAppended(recorder.requests)).toHaveLength(1));
      await waitForDom(() => expect(page.chat.status).toBe('ready'));
      expect(finishes).toEqual([{ isAbort: true, isError: false }]);
      expect(page.chat.error).toBeUndefined();
      expect(errors).toEqual([]);
      await waitForDom(() => expect(page.session.status).toEqual({ type: 'ready' }));
      page.unmount();
    });
  }

  for (const how of ['stop()', 'session.stop()'] as const) {
    it(`useDurableChat, ${how} mid-reply: onFinish({ isAbort: true }) once, ready, no error, the agent stopped`, async () => {
      const finishes: Finish[] = [];
      const errors: unknown[] = [];
      const recorder = appendRecorder();
      const { retry: _shortened, ...options } = chatOptions(server, nextChatId('durable-stop'));
      const chat = mountChat({
        ...options,
        clientData: slow,
        fetch: recorder.fetch,
        onFinish: ({ isAbort, isError }) => finishes.push({ isAbort, isError }),
        onError: (error) => errors.push(error),
      });
      void chat.run((current) => current.sendMessage({ text: TEXT }));
      await waitForDom(() => expect(started(chat.current.messages)).toBe(true), { timeout: 5_000 });
      if (how === 'stop()') await chat.run((current) => current.stop());
      else await chat.run((current) => current.session.stop());
      await waitForDom(() => expect(finishes).toHaveLength(1));
      await waitForDom(() => expect(stopAppended(recorder.requests)).toHaveLength(1));
      await waitForDom(() => expect(chat.current.status).toBe('ready'));
      expect(finishes).toEqual([{ isAbort: true, isError: false }]);
      expect(chat.current.error).toBeUndefined();
      expect(errors).toEqual([]);
      await waitForDom(() => expect(chat.current.sessionStatus).toEqual({ type: 'ready' }));
      chat.unmount();
    });
  }

  for (const how of ['chat.stop()', 'transport.stop(chatId)'] as const) {
    it(`the AI SDK's Chat on SessionChatTransport, ${how} mid-reply: onFinish({ isAbort: true }) once, ready, no error`, async () => {
      const finishes: Finish[] = [];
      const errors: unknown[] = [];
      const { transport } = createTransport(server, { clientData: slow });
      const chat = new TestChat({
        id: nextChatId('transport-stop'),
        transport,
        onFinish: ({ isAbort, isError }) => finishes.push({ isAbort, isError }),
        onError: (error) => errors.push(error),
      });
      void chat.sendMessage({ text: TEXT });
      await waitForDom(() => expect(started(chat.messages)).toBe(true), { timeout: 5_000 });
      if (how === 'chat.stop()') await chat.stop();
      else await transport.stop(chat.id);
      await waitForDom(() => expect(finishes).toHaveLength(1));
      expect(finishes).toEqual([{ isAbort: true, isError: false }]);
      expect(chat.status).toBe('ready');
      expect(chat.error).toBeUndefined();
      expect(errors).toEqual([]);
      await waitForDom(() => expect(transport.getState(chat.id).turnLive).toBe(false));
      transport.close();
    });
  }
});

// The moment a reloaded page resumes the live turn and its read has not been answered yet (a slow
// or half-open connection: the connect timeout is 20 s). useChat's stop then had no stream to
// abort: nothing was stopped until the connection answered.
describe('stop while a resume’s read is not answered yet', () => {
  it('useChat + useChatSession, chat.stop(): the agent is stopped now, ready, no error', async () => {
    const records = new Map<string, PersistedChatRecord>();
    const chatId = nextChatId('plain-stop-resuming');
    const recorder = appendRecorder();
    const options = (fetch: typeof globalThis.fetch) =>
      sessionOptions(server, chatId, records, { clientData: { delayMs: 20, repeat: 400 }, fetch });
    const first = mountPlainChat({ session: options(nodeFetch), chat: {} });
    void first.chat.sendMessage({ text: TEXT });
    await waitForDom(() => expect(started(first.chat.messages as UIMessage[])).toBe(true), {
      timeout: 5_000,
    });
    await first.session.sessionTransport.getClient(chatId).flushPersistence();
    first.unmount();
    expect(records.get(chatId)).toMatchObject({ turnLive: true });
    server.faults.hangOutConnections(1);
    const errors: unknown[] = [];
    const finishes: Finish[] = [];
    const page = mountPlainChat({
      session: options(recorder.fetch),
      chat: {
        resume: true,
        onFinish: ({ isAbort, isError }) => finishes.push({ isAbort, isError }),
        onError: (error) => errors.push(error),
      },
    });
    // useChat's status stays `ready` until its resume returns a stream; the session says `resuming`.
    await waitForDom(() => expect(page.session.status.type).toBe('resuming'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(page.session.state.turnLive).toBe(true);
    void page.chat.stop();
    await waitForDom(() => expect(stopAppended(recorder.requests)).toHaveLength(1), { timeout: 3_000 });
    await waitForDom(() => expect(page.chat.status).toBe('ready'));
    await waitForDom(() => expect(page.session.state.turnLive).toBe(false));
    await waitForDom(() => expect(page.session.status.type).toBe('ready'));
    expect(page.chat.error).toBeUndefined();
    expect(errors).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(stopAppended(recorder.requests)).toHaveLength(1);
    server.faults.reset();
    page.unmount();
  });
});
