// @vitest-environment happy-dom
import { waitFor as waitForDom } from '@testing-library/react';
import type { UIMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PersistedChatRecord } from '../../src/client/persistence.js';
import type { DevServer } from '../../src/dev-server/index.js';
import {
  appendKinds,
  chatOptions,
  type MountedChat,
  mountChat,
  nextChatId,
  type RecordedRequest,
  recordingFetch,
  startEchoServer,
} from './support/harness.js';

let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer();
});
afterAll(async () => {
  await server.close();
});

const outReads = (requests: RecordedRequest[]) =>
  requests.filter((request) => request.path.endsWith('/out')).length;

const LONG = 'survive the reload of this page';
const fullReply = (repeat: number) => `assistant: Echo: ${Array(repeat).fill(LONG).join(' ')}`;

/** Sends LONG slowly on a first "page" and unmounts it mid-reply; returns the user message. */
async function leaveMidTurn(chatId: string, records: Map<string, PersistedChatRecord>, repeat = 8) {
  const recorder = recordingFetch();
  const first = mountChat(
    chatOptions(server, chatId, records, { fetch: recorder.fetch, clientData: { delayMs: 20, repeat } }),
  );
  void first.run((current) => current.sendMessage({ text: LONG }));
  await waitForDom(() =>
    expect((first.transcript()[1] ?? '').length).toBeGreaterThan('assistant: Echo: '.length),
  );
  await first.current.session.sessionTransport.getClient(chatId).flushPersistence();
  const user = first.current.messages[0] as UIMessage;
  first.unmount();
  // The page left before the reply ended (else there would be nothing to resume).
  expect(records.get(chatId)).toMatchObject({ turnLive: true });
  return { user: structuredClone(user), recorder };
}

describe('reload', () => {
  it('mid-turn: unmount only disconnects; the remount resumes and completes the reply exactly once', async () => {
    const chatId = nextChatId('reload');
    const records = new Map<string, PersistedChatRecord>();
    const { user, recorder: firstPage } = await leaveMidTurn(chatId, records);
    expect(records.get(chatId)).toMatchObject({ turnLive: true });

    const second = mountChat(chatOptions(server, chatId, records, { messages: [user] }));
    await waitForDom(() => expect(second.transcript()).toEqual([`user: ${LONG}`, fullReply(8)]), {
      timeout: 5_000,
    });
    await waitForDom(() => expect(second.current.status).toBe('ready'));
    // A resume is never shown as a send (a fast replay may go straight to streaming).
    expect(second.statuses.filter((status) => status === 'sending' || status === 'waking')).toEqual([]);
    expect(appendKinds(firstPage.requests)).toEqual(['message']);
    expect(records.get(chatId)).toMatchObject({ turnLive: false });
    second.unmount();
  });

  it('after the turn finished: the remount makes no request and is ready at once', async () => {
    const chatId = nextChatId('finished');
    const records = new Map<string, PersistedChatRecord>();
    const first = mountChat(chatOptions(server, chatId, records));
    await first.run((current) => current.sendMessage({ text: 'short' }));
    await waitForDom(() => expect(first.current.status).toBe('ready'));
    first.unmount();

    const recorder = recordingFetch();
    const second = mountChat(chatOptions(server, chatId, records, { fetch: recorder.fetch }));
    await waitForDom(() => expect(second.current.session.state.hydrated).toBe(true));
    expect(second.current.status).toBe('ready');
    expect(second.current.session.state.sessionId).toMatch(/^session_/);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(recorder.requests).toEqual([]);
    expect(second.statuses).toEqual(['ready']);
    second.unmount();
  });

  it('stop() after a reload stops the agent with one call', async () => {
    const chatId = nextChatId('stop-after-reload');
    const records = new Map<string, PersistedChatRecord>();
    const { user } = await leaveMidTurn(chatId, records, 40);
    const recorder = recordingFetch();
    const second = mountChat(
      chatOptions(server, chatId, records, { messages: [user], fetch: recorder.fetch }),
    );
    await waitForDom(() => expect(second.current.sessionStatus.type).toBe('streaming'));
    await second.run((current) => current.stop());
    await waitForDom(() => expect(second.current.status).toBe('ready'));
    expect(appendKinds(recorder.requests)).toEqual(['stop']);
    expect((second.transcript()[1] ?? '').length).toBeLessThan(fullReply(40).length);
    second.unmount();
  });

  it('resume: false leaves a live turn alone', async () => {
    const chatId = nextChatId('no-resume');
    const records = new Map<string, PersistedChatRecord>();
    const { user } = await leaveMidTurn(chatId, records);
    const recorder = recordingFetch();
    const second = mountChat(
      chatOptions(server, chatId, records, { messages: [user], fetch: recorder.fetch, resume: false }),
    );
    await waitForDom(() => expect(second.current.session.state.hydrated).toBe(true));
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(outReads(recorder.requests)).toBe(0);
    expect(second.transcript()).toEqual([`user: ${LONG}`]);
    second.unmount();
  });
});

describe('StrictMode', () => {
  it('a reload under StrictMode: one resume, one reader, no stop, the reply once', async () => {
    const chatId = nextChatId('strict-reload');
    const records = new Map<string, PersistedChatRecord>();
    const { user } = await leaveMidTurn(chatId, records);
    const recorder = recordingFetch();
    const second = mountChat(
      chatOptions(server, chatId, records, { messages: [user], fetch: recorder.fetch }),
      {
        strict: true,
      },
    );
    await waitForDom(() => expect(second.transcript()).toEqual([`user: ${LONG}`, fullReply(8)]), {
      timeout: 5_000,
    });
    await waitForDom(() => expect(second.current.status).toBe('ready'));
    expect(outReads(recorder.requests)).toBe(1);
    expect(appendKinds(recorder.requests)).toEqual([]);
    second.unmount();
  });

  it('sends and streams under StrictMode without a stray stop or a second reader', async () => {
    const recorder = recordingFetch();
    const chat = mountChat(
      chatOptions(server, nextChatId('strict-send'), undefined, { fetch: recorder.fetch }),
      {
        strict: true,
      },
    );
    await chat.run((current) => current.sendMessage({ text: 'strict hello' }));
    await waitForDom(() => expect(chat.current.status).toBe('ready'));
    expect(chat.transcript()).toEqual(['user: strict hello', 'assistant: Echo: strict hello']);
    expect(appendKinds(recorder.requests)).toEqual(['message']);
    expect(outReads(recorder.requests)).toBe(1);
    chat.unmount();
  });
});

describe('switching chatId', () => {
  it('switches cleanly: the new chat starts empty with its own session, the old one keeps its own', async () => {
    const records = new Map<string, PersistedChatRecord>();
    const first = nextChatId('switch-a');
    const second = nextChatId('switch-b');
    const chat: MountedChat = mountChat(chatOptions(server, first, records));
    await chat.run((current) => current.sendMessage({ text: 'in a' }));
    await waitForDom(() => expect(chat.current.status).toBe('ready'));
    const firstSession = chat.current.session.state.sessionId;
    const firstTransport = chat.current.session.transport;

    chat.update(chatOptions(server, second, records));
    await waitForDom(() => expect(chat.current.session.state.chatId).toBe(second));
    expect(chat.current.messages).toEqual([]);
    expect(chat.current.session.transport).not.toBe(firstTransport);
    await chat.run((current) => current.sendMessage({ text: 'in b' }));
    await waitForDom(() => expect(chat.transcript()).toEqual(['user: in b', 'assistant: Echo: in b']));
    expect(chat.current.session.state.sessionId).not.toBe(firstSession);
    expect(records.get(first)?.sessionId).toBe(firstSession);
    chat.unmount();
  });
});
