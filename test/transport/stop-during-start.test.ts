import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevServer } from '../../src/dev-server/index.js';
import type { StartSessionInput, StartSessionResult } from '../../src/index.js';
import { SessionChatTransport } from '../../src/transport/session-chat-transport.js';
import {
  startEchoServer,
  startSessionVia,
  TestChat,
  transcript,
  uniqueChatId,
  waitFor,
} from './support/dev-server-fixture.js';

/**
 * The moment before any append: the chat's session is still starting (the app's route is slow,
 * or retried). A stop there settles the send at once and sends nothing; a leave there (an abort
 * and a disconnect in the same tick) lets the message go out once the session exists. Default
 * options throughout.
 */
let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer();
});
afterAll(async () => {
  await server.close();
});

/** A chat route whose starts wait until `release()`. */
function heldStart() {
  const route = startSessionVia(server);
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  const state = { calls: 0 };
  const startSession = async (input: StartSessionInput): Promise<StartSessionResult> => {
    state.calls += 1;
    await gate;
    return route(input);
  };
  return { startSession, release: () => open(), state };
}

function transportWith(startSession: (input: StartSessionInput) => Promise<StartSessionResult>) {
  return new SessionChatTransport({
    baseURL: server.url,
    taskIdentifier: 'echo',
    startSession,
    environment: { warn: () => {} },
  });
}

describe('a send while the chat’s session is still starting', () => {
  it('stopped there (useChat’s stop): the send settles at once, ready, no error; nothing is appended', async () => {
    const held = heldStart();
    const transport = transportWith(held.startSession);
    const chatId = uniqueChatId('stop-during-start');
    const chat = new TestChat({ id: chatId, transport });
    const sending = chat.sendMessage({ text: 'never mind' });
    await waitFor(() => held.state.calls === 1, 5_000, 'the session start');
    await chat.stop();
    let settled = false;
    void sending.then(() => {
      settled = true;
    });
    // The route still holds the start: the stop does not wait for it.
    await waitFor(() => settled, 2_000, 'the send to settle');
    expect(chat.status).toBe('ready');
    expect(chat.error).toBeUndefined();
    held.release();
    await transport.getClient(chatId).preload();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(server.inspect(chatId)?.in.nextSeq ?? 0).toBe(0);
    // The next send goes out as usual, on the session the first start made.
    await chat.sendMessage({ text: 'hello again' });
    expect(transcript(chat.messages).slice(-2)).toEqual([
      'user: hello again',
      'assistant: Echo: hello again',
    ]);
    expect(held.state.calls).toBe(1);
    transport.close();
  });

  it('left there (an abort and a disconnect in the same tick): settles at once, nothing sent, as a leave before the append at any moment on this path', async () => {
    const held = heldStart();
    const transport = transportWith(held.startSession);
    const chatId = uniqueChatId('leave-during-start');
    const chat = new TestChat({ id: chatId, transport });
    const sending = chat.sendMessage({ text: 'left before it went out' });
    await waitFor(() => held.state.calls === 1, 5_000, 'the session start');
    const stopping = chat.stop();
    transport.disconnect(chatId);
    await stopping;
    let settled = false;
    void sending.then(() => {
      settled = true;
    });
    await waitFor(() => settled, 2_000, 'the send to settle');
    expect(chat.error).toBeUndefined();
    held.release();
    await transport.getClient(chatId).preload();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(server.inspect(chatId)?.in.nextSeq ?? 0).toBe(0);
    transport.close();
  });

  it('the start failing after the stop: nothing reported for the stopped send; the next send starts again and is answered', async () => {
    const route = startSessionVia(server);
    let calls = 0;
    let fail!: () => void;
    const failing = new Promise<never>((_, reject) => {
      fail = () => reject(new TypeError('Failed to fetch'));
    });
    const transport = new SessionChatTransport({
      baseURL: server.url,
      taskIdentifier: 'echo',
      // The first start hangs, then fails for good (its retries too); later starts succeed.
      startSession: (input) => {
        calls += 1;
        return calls === 1
          ? failing
          : calls <= 6
            ? Promise.reject(new TypeError('Failed to fetch'))
            : route(input);
      },
      retry: { maxAttempts: 2, initialDelayMs: 1, maxDelayMs: 1 },
      environment: { warn: () => {} },
    });
    const errors: unknown[] = [];
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    const chatId = uniqueChatId('start-fails-after-stop');
    const chat = new TestChat({ id: chatId, transport, onError: (error) => errors.push(error) });
    const sending = chat.sendMessage({ text: 'stopped' });
    await waitFor(() => calls === 1, 5_000, 'the session start');
    await chat.stop();
    await sending;
    fail();
    await waitFor(() => calls >= 2, 5_000, 'the start retried');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(errors).toEqual([]);
    expect(unhandled).toEqual([]);
    process.off('unhandledRejection', onUnhandled);
    calls = 6;
    await chat.sendMessage({ text: 'again' });
    expect(transcript(chat.messages).slice(-2)).toEqual(['user: again', 'assistant: Echo: again']);
    transport.close();
  });
});
