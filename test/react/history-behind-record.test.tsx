// @vitest-environment happy-dom
import { BroadcastChannel as NodeBroadcastChannel } from 'node:worker_threads';
import { waitFor as waitForDom } from '@testing-library/react';
import { lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../src/client/events.js';
import { type HistoryCursor, historyCursor } from '../../src/client/history-cursor.js';
import type { PersistedChatRecord } from '../../src/client/persistence.js';
import type { DevServer } from '../../src/dev-server/index.js';
import type { BroadcastChannelLike } from '../../src/session/tab-channel.js';
import type { TabCoordinationOptions } from '../../src/session/tab-coordinator.js';
import { MemoryLocks } from '../session/support/memory-locks.js';
import { startMomentsServer } from '../transport/support/moments.js';
import {
  appendKinds,
  chatOptions,
  mountChat,
  nextChatId,
  recordingFetch,
  startEchoServer,
  transcript as transcriptOf,
} from './support/harness.js';
import { mountPlainChat, sessionOptions } from './support/plain-harness.js';
import { approvalId } from './support/two-tab-app.js';

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
// the transcript's cursor (src/client/history-cursor.ts, `storedWins`). With tabs on, two more
// things stood in the way (the last describe): a tab that takes the free lock took the record's
// "turn over" for the turn it had not read (src/session/tab-life.ts, `takeOver`: useDurableChat's
// resume waits for that), and the turn read continues the approval message, which the replay
// rebuilt from nothing: an empty reply (src/session/rebuild-message.ts, `withShownContinuation`).
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

// The browser's case itself, tabs on (both coordination modes, both paths): tab 1 runs a
// tool-approval turn to its end; tab 2 opens after it with the transcript the app saved at tab
// 1's previous `onFinish` (the approval request), as a reload that read the app's store before
// tab 1's last save does. Tab 1 is idle by then: tab 2 takes the free lock and reads the record
// ("turn over", further along) while its own view starts at the transcript's cursor; and the
// turn it reads continues the approval message, which only the transcript holds.
describe('historyCursor behind the record after another tab’s approval turn, tabs on', () => {
  const ASK = '/approve ship it';
  const EXPECTED = ['user: /approve ship it', 'assistant: [tool-confirm]Confirmed: ship it'];
  let moments: DevServer;
  beforeAll(async () => {
    moments = await startMomentsServer();
  });
  afterAll(async () => {
    await moments.close();
  });
  type Saved = { messages: UIMessage[]; cursor: HistoryCursor };
  interface Tab {
    transcript(): string[];
    messages(): UIMessage[];
    status(): string;
    turnLive(): boolean;
    send(text: string): void;
    approve(id: string): Promise<void>;
    unmount(): void;
  }
  interface App {
    saves: { tab: string; saved: Saved }[];
    errors: unknown[];
    recorder: ReturnType<typeof recordingFetch>;
  }
  type Open = (name: string, chatId: string, tabs: TabCoordinationOptions, app: App, saved?: Saved) => Tab;
  const openDurable: Open = (name, chatId, tabs, app, saved) => {
    const { persistence: _memory, retry: _shortened, ...options } = chatOptions(moments, chatId);
    const holder: { chat?: ReturnType<typeof mountChat> } = {};
    const chat = mountChat({
      ...options,
      persistence: 'local',
      tabs,
      fetch: app.recorder.fetch,
      clientData: { delayMs: 5 },
      messages: structuredClone(saved?.messages ?? []),
      historyCursor: saved?.cursor,
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
      onError: (error) => app.errors.push(error),
      onFinish: ({ messages, isAbort, isError }) => {
        const current = holder.chat?.current;
        if (isAbort || isError || current === undefined) return;
        const cursor = historyCursor(current.session.source.getState());
        app.saves.push({ tab: name, saved: structuredClone({ messages, cursor }) });
      },
    });
    holder.chat = chat;
    return {
      transcript: () => chat.transcript(),
      messages: () => chat.current.messages,
      status: () => chat.current.status,
      turnLive: () => chat.current.session.source.getState().turnLive,
      send: (text) => void chat.run((current) => current.sendMessage({ text })),
      approve: (id) =>
        chat.run(async (current) => {
          await current.addToolApprovalResponse({ id, approved: true });
        }),
      unmount: () => chat.unmount(),
    };
  };
  const openPlain: Open = (name, chatId, tabs, app, saved) => {
    const { persistence: _memory, ...shared } = sessionOptions(moments, chatId);
    const holder: { page?: ReturnType<typeof mountPlainChat> } = {};
    const following = () => holder.page?.session.isFollowingTurn() === true;
    const page = mountPlainChat({
      session: {
        ...shared,
        persistence: 'local',
        tabs,
        fetch: app.recorder.fetch,
        clientData: { delayMs: 5 },
        historyCursor: saved?.cursor,
      },
      chat: {
        resume: true,
        messages: structuredClone(saved?.messages ?? []),
        sendAutomaticallyWhen: (input) =>
          !following() && lastAssistantMessageIsCompleteWithApprovalResponses(input),
        onError: (error) => app.errors.push(error),
        onFinish: ({ messages, isAbort, isError }) => {
          const session = holder.page?.session;
          if (isAbort || isError || following() || session === undefined) return;
          const cursor = historyCursor(session.source.getState());
          app.saves.push({
            tab: name,
            saved: structuredClone({ messages: messages as UIMessage[], cursor }),
          });
        },
      },
    });
    holder.page = page;
    return {
      transcript: () => page.transcript(),
      messages: () => page.chat.messages as UIMessage[],
      status: () => page.chat.status,
      turnLive: () => page.session.source.getState().turnLive,
      send: (text) => void page.chat.sendMessage({ text }),
      approve: async (id) => {
        await page.chat.addToolApprovalResponse({ id, approved: true });
      },
      unmount: () => page.unmount(),
    };
  };
  const channel = (name: string) => new NodeBroadcastChannel(name) as unknown as BroadcastChannelLike;
  const coordinations: [string, () => TabCoordinationOptions][] = [
    ['Web Locks', () => ({ locks: new MemoryLocks(), broadcastChannel: channel })],
    ['BroadcastChannel lease', () => ({ locks: null, broadcastChannel: channel })],
  ];
  const paths: [string, Open][] = [
    ['useChat + useChatSession + useFollowTurns', openPlain],
    ['useDurableChat', openDurable],
  ];
  const cases = paths.flatMap(([path, open]) =>
    coordinations.map(([mode, tabs]) => ({ path, mode, open, tabs })),
  );
  it.each(cases)(
    '$path ($mode): tab 2 shows the approved reply, once; tab 1 keeps it',
    async ({ open, tabs: coordination }) => {
      const chatId = nextChatId('history-behind-approval');
      const tabs = coordination();
      const app: App = { saves: [], errors: [], recorder: recordingFetch() };
      const tab1 = open('tab1', chatId, tabs, app);
      tab1.send(ASK);
      await waitForDom(() => expect(approvalId(tab1)).toBeDefined(), { timeout: 5_000 });
      await waitForDom(() => expect(tab1.status()).toBe('ready'));
      await waitForDom(() => expect(app.saves.length).toBeGreaterThan(0));
      const beforeLastSave = app.saves.at(-1)?.saved;
      await tab1.approve(approvalId(tab1) ?? '');
      await waitForDom(() => expect(tab1.transcript()).toEqual(EXPECTED), { timeout: 5_000 });
      await waitForDom(() => expect(tab1.turnLive()).toBe(false));
      await new Promise((resolve) => setTimeout(resolve, 200));

      const tab2 = open('tab2', chatId, tabs, app, beforeLastSave);
      await waitForDom(() => expect(tab2.transcript()).toEqual(EXPECTED), { timeout: 5_000 });
      await waitForDom(() => expect([tab1.status(), tab2.status()]).toEqual(['ready', 'ready']));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(tab2.transcript()).toEqual(EXPECTED);
      expect(tab1.transcript()).toEqual(EXPECTED);
      expect(app.errors).toEqual([]);
      expect(appendKinds(app.recorder.requests)).toEqual(['message', 'message']); // the message and the approval
      // Whatever tab saved last saved the whole transcript.
      expect(transcriptOf(app.saves.at(-1)?.saved.messages ?? [])).toEqual(EXPECTED);
      tab1.unmount();
      tab2.unmount();
    },
  );
});
