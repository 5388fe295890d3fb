// @vitest-environment happy-dom
import { waitFor as waitForDom } from '@testing-library/react';
import type { UIMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HistoryCursor, historyCursor } from '../../src/client/history-cursor.js';
import type { PersistedChatRecord } from '../../src/client/persistence.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { chatOptions, mountChat, nextChatId, startEchoServer } from './support/harness.js';

// `historyCursor` on the hooks: a transcript saved with its cursor, loaded on a page whose
// own storage knows nothing of the chat (another device). Library default retry options.

let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer();
});
afterAll(async () => {
  await server.close();
});

const LONG = 'come back to this reply on another device';
const fullReply = (repeat: number) => `assistant: Echo: ${Array(repeat).fill(LONG).join(' ')}`;

describe('history with historyCursor', () => {
  it('a reply live when the page closed resumes on a page with empty storage, once, after the saved turns', async () => {
    const chatId = nextChatId('history');
    const first = mountChat(chatOptions(server, chatId, new Map(), { retry: undefined }));
    await first.run((current) => current.sendMessage({ text: 'earlier' }));
    await waitForDom(() => expect(first.current.status).toBe('ready'));
    void first.run((current) =>
      current.sendMessage({ text: LONG }, { metadata: { delayMs: 20, repeat: 8 } }),
    );
    await waitForDom(() => expect((first.transcript()[3] ?? '').length).toBeGreaterThan(20));
    // What the app saves, mid-reply: the messages and the cursor, read together.
    const saved: { messages: UIMessage[]; cursor: HistoryCursor } = JSON.parse(
      JSON.stringify({
        messages: first.current.messages,
        cursor: historyCursor(first.current.session.source.getState()),
      }),
    );
    first.unmount();

    const records = new Map<string, PersistedChatRecord>();
    const second = mountChat(
      chatOptions(server, chatId, records, {
        retry: undefined,
        messages: saved.messages,
        historyCursor: saved.cursor,
      }),
    );
    await waitForDom(
      () =>
        expect(second.transcript()).toEqual([
          'user: earlier',
          'assistant: Echo: earlier',
          `user: ${LONG}`,
          fullReply(8),
        ]),
      { timeout: 10_000 },
    );
    await waitForDom(() => expect(second.current.status).toBe('ready'));
    expect(second.current.error).toBeUndefined();
    second.unmount();
  });

  it('a finished transcript loads as it is and the next turn follows it once', async () => {
    const chatId = nextChatId('history-finished');
    const first = mountChat(chatOptions(server, chatId, new Map(), { retry: undefined }));
    await first.run((current) => current.sendMessage({ text: 'one' }));
    await waitForDom(() => expect(first.current.status).toBe('ready'));
    await waitForDom(() => expect(first.current.session.source.getState().turnLive).toBe(false));
    const saved = {
      messages: structuredClone(first.current.messages),
      cursor: historyCursor(first.current.session.source.getState()),
    };
    first.unmount();

    const second = mountChat(
      chatOptions(server, chatId, new Map(), {
        retry: undefined,
        messages: saved.messages,
        historyCursor: saved.cursor,
      }),
    );
    await waitForDom(() => expect(second.current.session.source.getState().turnLive).toBe(false));
    expect(second.transcript()).toEqual(['user: one', 'assistant: Echo: one']);
    await second.run((current) => current.sendMessage({ text: 'two' }));
    await waitForDom(() =>
      expect(second.transcript()).toEqual([
        'user: one',
        'assistant: Echo: one',
        'user: two',
        'assistant: Echo: two',
      ]),
    );
    await waitForDom(() => expect(second.current.status).toBe('ready'));
    second.unmount();
  });
});
