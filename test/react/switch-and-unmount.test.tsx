// @vitest-environment happy-dom
import { waitFor as waitForDom } from '@testing-library/react';
import type { UIMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PersistedChatRecord } from '../../src/client/persistence.js';
import type { DevServer } from '../../src/dev-server/index.js';
import type { UseDurableChatOptions } from '../../src/react/use-durable-chat.js';
import { chatOptions, mountChat, nextChatId, startEchoServer } from './support/harness.js';

let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer();
});
afterAll(async () => {
  await server.close();
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const textOf = (messages: UIMessage[]) =>
  messages.map((message) => message.parts.map((part) => (part.type === 'text' ? part.text : '')).join(''));

/** `chatOptions` with the library's default retry and timeouts. */
function defaults(
  chatId: string,
  records: Map<string, PersistedChatRecord>,
  overrides: Partial<UseDurableChatOptions> = {},
): UseDurableChatOptions {
  const { retry: _shortened, ...options } = chatOptions(server, chatId, records);
  return { ...options, ...overrides };
}

interface Spies {
  errors: unknown[];
  finishes: { chat: string; isAbort: boolean; isError: boolean; texts: string[] }[];
}

function spiesFor(label: () => string): { spies: Spies; callbacks: Partial<UseDurableChatOptions> } {
  const spies: Spies = { errors: [], finishes: [] };
  return {
    spies,
    callbacks: {
      onError: (error) => spies.errors.push(error),
      onFinish: ({ isAbort, isError, messages }) =>
        spies.finishes.push({ chat: label(), isAbort, isError, texts: textOf(messages) }),
    },
  };
}

/** Leaves `chatId` mid-reply on a first "page" (records keep the live turn); returns the user message. */
async function leaveMidTurn(
  chatId: string,
  records: Map<string, PersistedChatRecord>,
  text: string,
  clientData: { delayMs: number; repeat: number },
) {
  const first = mountChat(defaults(chatId, records, { clientData }));
  void first.run((current) => current.sendMessage({ text }));
  await waitForDom(() => expect((first.transcript()[1] ?? '').length).toBeGreaterThan(30));
  await first.current.session.sessionTransport.getClient(chatId).flushPersistence();
  const user = structuredClone(first.current.messages[0]) as UIMessage;
  first.unmount();
  expect(records.get(chatId)).toMatchObject({ turnLive: true });
  return user;
}

describe('useDurableChat: switching chatId without remounting while a reply streams', () => {
  it("chat A's callbacks, errors and queued steering messages never reach chat B", async () => {
    const records = new Map<string, PersistedChatRecord>();
    const a = nextChatId('switch-a');
    const b = nextChatId('switch-b');
    let shown = a;
    const { spies, callbacks } = spiesFor(() => shown);
    const chat = mountChat(defaults(a, records, { ...callbacks, clientData: { delayMs: 15, repeat: 20 } }));
    void chat.run((current) => current.sendMessage({ text: 'reply in chat a' }));
    await waitForDom(() => expect(chat.current.status).toBe('streaming'));
    await chat.run((current) => current.sendPendingMessage('steer chat a'));
    expect(chat.current.pendingMessages).toHaveLength(1);

    shown = b;
    chat.update(defaults(b, records, callbacks));
    await waitForDom(() => expect(chat.current.session.id).toBe(b));
    expect(chat.current.messages).toEqual([]);
    expect(chat.current.pendingMessages).toEqual([]);
    // Chat A's turn (and its steering follow-up) end on the server meanwhile.
    await pause(800);
    expect(spies.errors).toEqual([]);
    expect(spies.finishes).toEqual([]);
    expect(chat.current.error).toBeUndefined();

    await chat.run((current) => current.sendMessage({ text: 'in b' }));
    await waitForDom(() => expect(chat.transcript()).toEqual(['user: in b', 'assistant: Echo: in b']));
    await waitForDom(() => expect(spies.finishes).toHaveLength(1));
    expect(spies.finishes[0]).toEqual({
      chat: b,
      isAbort: false,
      isError: false,
      texts: ['in b', 'Echo: in b'],
    });
    expect(chat.current.pendingMessages).toEqual([]);
    expect(spies.errors).toEqual([]);
    chat.unmount();
  });

  it('a switch while chat A resumes still resumes chat B', async () => {
    const records = new Map<string, PersistedChatRecord>();
    const a = nextChatId('resume-a');
    const b = nextChatId('resume-b');
    const userB = await leaveMidTurn(b, records, 'resume b', { delayMs: 25, repeat: 12 });
    const userA = await leaveMidTurn(a, records, 'resume a', { delayMs: 40, repeat: 40 });

    const chat = mountChat(defaults(a, records, { messages: [userA] }));
    await waitForDom(() => expect(chat.current.sessionStatus.type).toMatch(/resuming|streaming/));
    chat.update(defaults(b, records, { messages: [userB] }));
    await waitForDom(
      () =>
        expect(chat.transcript()).toEqual([
          'user: resume b',
          `assistant: Echo: ${Array(12).fill('resume b').join(' ')}`,
        ]),
      { timeout: 5_000 },
    );
    chat.unmount();
  });
});

describe('useDurableChat: unmounting mid-reply', () => {
  it('is a silent disconnect (no onError, no onFinish); the reply resumes when the chat is shown again', async () => {
    const records = new Map<string, PersistedChatRecord>();
    const chatId = nextChatId('unmount');
    const { spies, callbacks } = spiesFor(() => chatId);
    const first = mountChat(
      defaults(chatId, records, { ...callbacks, clientData: { delayMs: 20, repeat: 10 } }),
    );
    void first.run((current) => current.sendMessage({ text: 'leave me' }));
    await waitForDom(() => expect((first.transcript()[1] ?? '').length).toBeGreaterThan(30));
    await first.current.session.sessionTransport.getClient(chatId).flushPersistence();
    const user = structuredClone(first.current.messages[0]) as UIMessage;
    first.unmount();
    await pause(300);
    expect(spies.errors).toEqual([]);
    expect(spies.finishes).toEqual([]);
    expect(records.get(chatId)).toMatchObject({ turnLive: true });

    const second = mountChat(defaults(chatId, records, { ...callbacks, messages: [user] }));
    await waitForDom(
      () =>
        expect(second.transcript()).toEqual([
          'user: leave me',
          `assistant: Echo: ${Array(10).fill('leave me').join(' ')}`,
        ]),
      { timeout: 5_000 },
    );
    await waitForDom(() => expect(spies.finishes).toHaveLength(1));
    expect(spies.finishes[0]).toMatchObject({ isAbort: false, isError: false });
    expect(spies.errors).toEqual([]);
    second.unmount();
  });
});
