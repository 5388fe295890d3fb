// @vitest-environment happy-dom
// Issue 19 item 2: switching chats while a message is still being sent. The README's save
// rule (`onFinish` saves `messages` under the chat id shown) must never receive chat A's
// transcript while chat B is shown, on @ai-sdk/react 3 (which keeps the old Chat running)
// and 4 (which aborts it), and chat A's reply must be there when A is shown again.
import { waitFor as waitForDom } from '@testing-library/react';
import type { UIMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryPersistence, type PersistedChatRecord } from '../../src/client/persistence.js';
import type { DevServer } from '../../src/dev-server/index.js';
import type { UseDurableChatOptions } from '../../src/react/use-durable-chat.js';
import { chatOptions, mountChat, nextChatId, startEchoServer } from './support/harness.js';
import { mountPlainChat, sessionOptions } from './support/plain-harness.js';

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
const userMessage = (text: string): UIMessage => ({
  id: `user-${text.replaceAll(' ', '-')}`,
  role: 'user',
  parts: [{ type: 'text', text }],
});
const reply = (text: string, repeat: number) => `Echo: ${Array(repeat).fill(text).join(' ')}`;

interface Saved {
  /** What the app's `onFinish` saved, by the chat id shown when it ran. */
  saves: { shown: string; isAbort: boolean; texts: string[] }[];
}

describe.each([
  { moment: 'while the session starts', hold: false },
  { moment: 'while the append is unanswered', hold: true },
])('item 2: switching to chat B $moment in chat A', ({ hold }) => {
  it('useChat + useChatSession: onFinish never saves A’s transcript as B’s; A’s reply is there when A is shown again', async () => {
    const a = nextChatId('mid-send-a');
    const b = nextChatId('mid-send-b');
    const records = new Map<string, PersistedChatRecord>();
    const saved: Saved = { saves: [] };
    const clientData = { delayMs: 10, repeat: 6 };
    // The app's onFinish closes over the chat id of its render (the README's save rule).
    const props = (chatId: string, messages?: UIMessage[]) => ({
      session: sessionOptions(server, chatId, records, { clientData }),
      chat: {
        resume: true,
        ...(messages === undefined ? {} : { messages }),
        onFinish: ({ isAbort, messages: all }: { isAbort: boolean; messages: UIMessage[] }) =>
          saved.saves.push({ shown: chatId, isAbort, texts: textOf(all) }),
      },
    });
    if (hold) server.faults.holdAppendResponses(1);
    const page = mountPlainChat(props(a));
    const message = userMessage('sent in chat a');
    void page.chat.sendMessage(message);
    if (hold) await waitForDom(() => expect(page.session.state.turnLive).toBe(true));
    page.update(props(b));
    await waitForDom(() => expect(page.session.id).toBe(b));
    await pause(800); // chat A's agent answers meanwhile
    expect(saved.saves.filter((save) => save.shown === b && !save.isAbort)).toEqual([]);
    expect(page.transcript()).toEqual([]);

    page.update(props(a, [message]));
    await waitForDom(
      () =>
        expect(page.transcript()).toEqual([
          'user: sent in chat a',
          `assistant: ${reply('sent in chat a', 6)}`,
        ]),
      { timeout: 5_000 },
    );
    await waitForDom(() =>
      expect(saved.saves.filter((save) => !save.isAbort)).toEqual([
        { shown: a, isAbort: false, texts: ['sent in chat a', reply('sent in chat a', 6)] },
      ]),
    );
    expect(saved.saves.filter((save) => save.shown === b && !save.isAbort)).toEqual([]);
    page.unmount();
    server.faults.reset();
  });

  it('useDurableChat: onFinish never saves A’s transcript as B’s; A’s reply is there when A is shown again', async () => {
    const a = nextChatId('durable-mid-send-a');
    const b = nextChatId('durable-mid-send-b');
    const records = new Map<string, PersistedChatRecord>();
    const saved: Saved = { saves: [] };
    const clientData = { delayMs: 10, repeat: 6 };
    const options = (chatId: string, messages?: UIMessage[]): UseDurableChatOptions => {
      const { retry: _shortened, ...base } = chatOptions(server, chatId, records);
      return {
        ...base,
        persistence: memoryPersistence(records),
        clientData,
        ...(messages === undefined ? {} : { messages }),
        onFinish: ({ isAbort, messages: all }) =>
          saved.saves.push({ shown: chatId, isAbort, texts: textOf(all) }),
      };
    };
    if (hold) server.faults.holdAppendResponses(1);
    const chat = mountChat(options(a));
    const message = userMessage('sent in durable a');
    void chat.run((current) => current.sendMessage(message));
    if (hold) await waitForDom(() => expect(chat.current.session.state.turnLive).toBe(true));
    chat.update(options(b));
    await waitForDom(() => expect(chat.current.session.id).toBe(b));
    await pause(800);
    expect(saved.saves.filter((save) => save.shown === b && !save.isAbort)).toEqual([]);
    expect(chat.transcript()).toEqual([]);

    chat.update(options(a, [message]));
    await waitForDom(
      () =>
        expect(chat.transcript()).toEqual([
          'user: sent in durable a',
          `assistant: ${reply('sent in durable a', 6)}`,
        ]),
      { timeout: 5_000 },
    );
    await waitForDom(() =>
      expect(saved.saves.filter((save) => !save.isAbort)).toEqual([
        { shown: a, isAbort: false, texts: ['sent in durable a', reply('sent in durable a', 6)] },
      ]),
    );
    expect(saved.saves.filter((save) => save.shown === b && !save.isAbort)).toEqual([]);
    chat.unmount();
    server.faults.reset();
  });
});
