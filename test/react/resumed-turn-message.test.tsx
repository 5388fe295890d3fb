// @vitest-environment happy-dom
// Issue 19 item 8: a reply resumed after coming back brings back the user message it answers.
// The app is written as the README says: the transcript is saved in `onFinish` (unless
// `isAbort` / `isError`) and loaded back as `messages`. The user sends, leaves before the reply
// starts (so nothing was saved), and comes back: the message and its reply are there, once,
// and `onFinish` saves both.
import { waitFor as waitForDom } from '@testing-library/react';
import type { UIMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryPersistence, type PersistedChatRecord } from '../../src/client/persistence.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { pauseTurn, startMomentsServer } from '../transport/support/moments.js';
import { chatOptions, mountChat, nextChatId } from './support/harness.js';
import { mountPlainChat, sessionOptions } from './support/plain-harness.js';

let server: DevServer;
beforeAll(async () => {
  server = await startMomentsServer();
});
afterAll(async () => {
  await server.close();
});

const textOf = (messages: readonly UIMessage[]) =>
  messages.map((message) => message.parts.map((part) => (part.type === 'text' ? part.text : '')).join(''));
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The app's own transcript store (a database behind a server action, say). */
class SavedTranscripts {
  readonly saves: { chatId: string; texts: string[] }[] = [];
  private readonly byChat = new Map<string, UIMessage[]>();
  save(chatId: string, messages: UIMessage[]): void {
    this.byChat.set(chatId, structuredClone(messages));
    this.saves.push({ chatId, texts: textOf(messages) });
  }
  load(chatId: string): UIMessage[] {
    return structuredClone(this.byChat.get(chatId) ?? []);
  }
}

describe.each([
  { moment: 'before the reply starts', beforeChunk: 0 },
  { moment: 'mid-reply', beforeChunk: 6 },
])('item 8: send, leave $moment, come back', ({ beforeChunk }) => {
  it('useChat + useChatSession + useFollowTurns: the message and its reply are there once, and onFinish saves both', async () => {
    const chatId = nextChatId('plain-come-back');
    const records = new Map<string, PersistedChatRecord>();
    const app = new SavedTranscripts();
    const mount = () =>
      mountPlainChat({
        session: sessionOptions(server, chatId, records, { clientData: { delayMs: 5, repeat: 4 } }),
        chat: {
          resume: true,
          messages: app.load(chatId),
          onFinish: ({ messages, isAbort, isError }) => {
            if (!isAbort && !isError) app.save(chatId, messages as UIMessage[]);
          },
        },
      });
    // A first turn, saved as the README says.
    const first = mount();
    await first.chat.sendMessage({ text: 'first question' });
    await waitForDom(() => expect(app.saves).toHaveLength(1));
    const paused = pauseTurn(chatId, 'second question', beforeChunk);
    void first.chat.sendMessage({ text: 'second question' });
    await waitForDom(() => expect(paused.reached).toBe(true), { timeout: 5_000 });
    await waitForDom(() => expect(records.get(chatId)?.turnLive).toBe(true));
    first.unmount();
    paused.release();
    await pause(300);

    const back = mount();
    const expected = [
      'user: first question',
      'assistant: Echo: first question first question first question first question',
      'user: second question',
      'assistant: Echo: second question second question second question second question',
    ];
    await waitForDom(() => expect(back.transcript()).toEqual(expected), { timeout: 5_000 });
    await waitForDom(() => expect(app.saves).toHaveLength(2));
    await pause(200);
    expect(back.transcript()).toEqual(expected);
    expect(app.saves.at(-1)).toEqual({ chatId, texts: expected.map((line) => line.replace(/^\w+: /, '')) });
    expect(app.saves).toHaveLength(2);
    back.unmount();
  });

  it('useDurableChat: the message and its reply are there once, and onFinish saves both', async () => {
    const chatId = nextChatId('durable-come-back');
    const records = new Map<string, PersistedChatRecord>();
    const app = new SavedTranscripts();
    const mount = () => {
      const { retry: _shortened, ...options } = chatOptions(server, chatId, records);
      return mountChat({
        ...options,
        persistence: memoryPersistence(records),
        clientData: { delayMs: 5, repeat: 4 },
        messages: app.load(chatId),
        onFinish: ({ messages, isAbort, isError }) => {
          if (!isAbort && !isError) app.save(chatId, messages);
        },
      });
    };
    const first = mount();
    await first.run((current) => current.sendMessage({ text: 'first question' }));
    await waitForDom(() => expect(app.saves).toHaveLength(1));
    const paused = pauseTurn(chatId, 'second question', beforeChunk);
    void first.run((current) => current.sendMessage({ text: 'second question' }));
    await waitForDom(() => expect(paused.reached).toBe(true), { timeout: 5_000 });
    await waitForDom(() => expect(records.get(chatId)?.turnLive).toBe(true));
    first.unmount();
    paused.release();
    await pause(300);

    const back = mount();
    const expected = [
      'user: first question',
      'assistant: Echo: first question first question first question first question',
      'user: second question',
      'assistant: Echo: second question second question second question second question',
    ];
    await waitForDom(() => expect(back.transcript()).toEqual(expected), { timeout: 5_000 });
    await waitForDom(() => expect(app.saves).toHaveLength(2));
    await pause(200);
    expect(back.transcript()).toEqual(expected);
    expect(app.saves.at(-1)).toEqual({ chatId, texts: expected.map((line) => line.replace(/^\w+: /, '')) });
    expect(app.saves).toHaveLength(2);
    back.unmount();
  });
});
