// @vitest-environment happy-dom
import { waitFor as waitForDom } from '@testing-library/react';
import type { UIMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../src/client/events.js';
import { type HistoryCursor, historyCursor } from '../../src/client/history-cursor.js';
import type { PersistedChatRecord } from '../../src/client/persistence.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { chatOptions, mountChat, nextChatId, startEchoServer } from './support/harness.js';
import { mountPlainChat, sessionOptions } from './support/plain-harness.js';

// KNOWN DEFECT (issue 19 item 10 on useDurableChat, found by examples/nextjs `/durable`): a page
// is given a transcript whose history cursor is BEHIND this browser's own record of the chat,
// and the turn in between has ended. The record wins (docs/react.md, "History": "When this
// browser's record is at least as far along, it wins and the cursor changes nothing"), so the
// page reads nothing and shows the transcript without that turn, for good.
//
// In the browser: tab 1 owns a tool-approval turn and saves its transcript in `onFinish`; tab 2
// reloads after the tool output. Tab 2 reads the saved transcript (cursor: the end of the
// approval request) before tab 1's last `onFinish` saves again, and the record after tab 1
// wrote "turn ended"; tab 1's `turn-finished` announcement went out while tab 2 was loading.
// Tab 2 ends at `[sendEmail approval-requested]` with Send enabled, while tab 1 shows the
// reply (2 runs in 25 with both tabs' CPU throttled 4×). The examples suite's `/durable`
// approval-reload runs failed 2 and 1 of 48 in two runs, in other ways too (the reloaded tab
// without the user's message, or with an empty reply; tab 1's reply replaced by two
// `approval-requested` parts): not all explained by this.
//
// Both React paths behave alike (the rule is `withHistoryCursor`'s, src/client); on the plain
// path the example saves on every status change, which narrows the window: its 96 runs passed.
// Fixed: a stored record further along whose turn is over no longer wins; the chat reads on from
// the transcript's cursor (src/client/history-cursor.ts, `storedWins`).
let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer();
});
afterAll(async () => {
  await server.close();
});

describe('historyCursor behind this browser’s record, the turn in between ended', () => {
  it('useDurableChat: the reply the transcript lacks shows, once, after it', async () => {
    const chatId = nextChatId('history-behind');
    const records = new Map<string, PersistedChatRecord>();
    const first = mountChat(chatOptions(server, chatId, records, { retry: undefined }));
    await first.run((current) => current.sendMessage({ text: 'one' }));
    await waitForDom(() => expect(first.current.status).toBe('ready'));
    await waitForDom(() => expect(first.current.session.source.getState().turnLive).toBe(false));
    // The app saved its transcript here; its save after the next turn has not happened (yet).
    const saved: { messages: UIMessage[]; cursor: HistoryCursor } = structuredClone({
      messages: first.current.messages,
      cursor: historyCursor(first.current.session.source.getState()),
    });
    await first.run((current) => current.sendMessage({ text: 'two' }));
    await waitForDom(() => expect(first.current.status).toBe('ready'));
    await waitForDom(() => expect(first.current.session.source.getState().turnLive).toBe(false));
    first.unmount();

    // The same browser (its record says: after turn two), loaded with the older transcript.
    const second = mountChat(
      chatOptions(server, chatId, records, {
        retry: undefined,
        messages: saved.messages,
        historyCursor: saved.cursor,
      }),
    );
    // (Its user message is not on `.out`: an app saving in `onFinish` has it in the transcript
    // already when the reply continues a message, as the approval turn does.)
    await waitForDom(() => expect(second.transcript()).toContain('assistant: Echo: two'), { timeout: 2_000 });
    expect(second.transcript().filter((line) => line === 'assistant: Echo: two')).toHaveLength(1);
    expect(second.transcript().slice(0, 2)).toEqual(['user: one', 'assistant: Echo: one']);
    second.unmount();
  });

  it('useChat + useChatSession + useFollowTurns: the same', async () => {
    const chatId = nextChatId('history-behind-plain');
    const records = new Map<string, PersistedChatRecord>();
    const first = mountPlainChat({
      session: sessionOptions(server, chatId, records),
      chat: { resume: true },
    });
    await first.chat.sendMessage({ text: 'one' });
    await waitForDom(() => expect(first.chat.status).toBe('ready'));
    await waitForDom(() => expect(first.session.source.getState().turnLive).toBe(false));
    const saved: { messages: UIMessage[]; cursor: HistoryCursor } = structuredClone({
      messages: first.chat.messages as UIMessage[],
      cursor: historyCursor(first.session.source.getState()),
    });
    await first.chat.sendMessage({ text: 'two' });
    await waitForDom(() => expect(first.chat.status).toBe('ready'));
    await waitForDom(() => expect(first.session.source.getState().turnLive).toBe(false));
    first.unmount();

    const second = mountPlainChat({
      session: sessionOptions(server, chatId, records, { historyCursor: saved.cursor }),
      chat: { resume: true, messages: saved.messages },
    });
    await waitForDom(() => expect(second.transcript()).toContain('assistant: Echo: two'), { timeout: 2_000 });
    expect(second.transcript().filter((line) => line === 'assistant: Echo: two')).toHaveLength(1);
    second.unmount();
  });

  it('useDurableChat: the cursor trimmed meanwhile (two turns later): the transcript stays as saved, and the chat says so', async () => {
    // Trims at once: two turns after the cursor, `.out` no longer holds the turn after it.
    const trimming = await startEchoServer({ trimDelayMs: 0 });
    try {
      const chatId = nextChatId('history-behind-trimmed');
      const records = new Map<string, PersistedChatRecord>();
      const first = mountChat(chatOptions(trimming, chatId, records, { retry: undefined }));
      await first.run((current) => current.sendMessage({ text: 'one' }));
      await waitForDom(() => expect(first.current.status).toBe('ready'));
      await waitForDom(() => expect(first.current.session.source.getState().turnLive).toBe(false));
      const saved: { messages: UIMessage[]; cursor: HistoryCursor } = structuredClone({
        messages: first.current.messages,
        cursor: historyCursor(first.current.session.source.getState()),
      });
      for (const text of ['two', 'three']) {
        await first.run((current) => current.sendMessage({ text }));
        await waitForDom(() => expect(first.current.status).toBe('ready'));
        await waitForDom(() => expect(first.current.session.source.getState().turnLive).toBe(false));
      }
      first.unmount();

      const events: SessionEvent[] = [];
      const second = mountChat(
        chatOptions(trimming, chatId, records, {
          retry: undefined,
          messages: saved.messages,
          historyCursor: saved.cursor,
          onEvent: (event) => events.push(event),
        }),
      );
      await waitForDom(() => expect(events.map((event) => event.type)).toContain('trimmed-cursor'), {
        timeout: 2_000,
      });
      await waitForDom(() => expect(second.current.session.source.getState().turnLive).toBe(false));
      expect(second.current.status).toBe('ready');
      // Nothing after the cursor is made up: no later turn is shown as the one that is gone.
      expect(second.transcript()).toEqual(['user: one', 'assistant: Echo: one']);
      second.unmount();
    } finally {
      await trimming.close();
    }
  });
});
