// @vitest-environment happy-dom
// Issue 19: "A trailing tab blocks the owner's next send." Tab 1 owns a turn; tab 2 reloads
// mid-turn and its resume is slow (its session start, the token a reloaded page fetches, waits);
// tab 1's turn ends and tab 1 lets go of the lock; tab 2 gets it while its slow read of tab 1's
// ended turn goes on (`trailing`). Tab 1's user sends the next message: nobody drives a turn,
// so it must go out (it was refused with TURN_IN_OTHER_TAB after ACQUIRE_GRACE_MS), and tab 2,
// once its start is let go, shows both turns, read-only.
import { BroadcastChannel as NodeBroadcastChannel } from 'node:worker_threads';
import { waitFor as waitForDom } from '@testing-library/react';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevServer } from '../../src/dev-server/index.js';
import type { BroadcastChannelLike } from '../../src/session/tab-channel.js';
import type { TabCoordinationOptions } from '../../src/session/tab-coordinator.js';
import { MemoryLocks } from '../session/support/memory-locks.js';
import { pauseTurn, startMomentsServer } from '../transport/support/moments.js';
import { appendKinds, chatOptions, mountChat, nextChatId, recordingFetch } from './support/harness.js';
import { mountPlainChat, sessionOptions } from './support/plain-harness.js';

let server: DevServer;
beforeAll(async () => {
  server = await startMomentsServer();
});
afterAll(async () => {
  await server.close();
});

const channel = (name: string) => new NodeBroadcastChannel(name) as unknown as BroadcastChannelLike;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const EXPECTED = ['user: first', 'assistant: Echo: first', 'user: second', 'assistant: Echo: second'];

interface Tab {
  transcript(): string[];
  status(): string;
  error(): Error | undefined;
  tab(): { owner: boolean; following: boolean };
  send(text: string): void;
  unmount(): void;
}

interface App {
  saves: string[];
  errors: { tab: string; error: unknown }[];
  recorder: ReturnType<typeof recordingFetch>;
}

/** `startUntil`: the tab's session start (a reloaded page fetches a token first) waits for it. */
type Open = (
  name: string,
  chatId: string,
  tabs: TabCoordinationOptions,
  app: App,
  startUntil?: Promise<void>,
) => Tab;

type StartSession = NonNullable<ReturnType<typeof chatOptions>['startSession']>;
const heldStart = (start: StartSession | undefined, until: Promise<void> | undefined): StartSession => {
  if (start === undefined) throw new Error('the harness gives every tab a startSession');
  if (until === undefined) return start;
  return async (...args: Parameters<StartSession>) => {
    await until;
    return start(...args);
  };
};

const openDurable: Open = (name, chatId, tabs, app, startUntil) => {
  const { persistence: _memory, retry: _shortened, ...options } = chatOptions(server, chatId);
  const chat = mountChat({
    ...options,
    startSession: heldStart(options.startSession, startUntil),
    persistence: 'local',
    tabs,
    fetch: app.recorder.fetch,
    clientData: { delayMs: 5 },
    onError: (error) => app.errors.push({ tab: name, error }),
    onFinish: ({ isAbort, isError }) => {
      if (!isAbort && !isError) app.saves.push(name);
    },
  });
  return {
    transcript: () => chat.transcript(),
    status: () => chat.current.status,
    error: () => chat.current.error,
    tab: () => chat.current.session.tab,
    send: (text) =>
      void chat.run((current) => current.sendMessage({ text })).catch(() => undefined /* onError has it */),
    unmount: () => chat.unmount(),
  };
};

const openPlain: Open = (name, chatId, tabs, app, startUntil) => {
  const { persistence: _memory, ...shared } = sessionOptions(server, chatId);
  const holder: { page?: ReturnType<typeof mountPlainChat> } = {};
  const following = () => holder.page?.session.isFollowingTurn() === true;
  const page = mountPlainChat({
    session: {
      ...shared,
      startSession: heldStart(shared.startSession, startUntil),
      persistence: 'local',
      tabs,
      fetch: app.recorder.fetch,
      clientData: { delayMs: 5 },
    },
    chat: {
      resume: true,
      onError: (error) => app.errors.push({ tab: name, error }),
      onFinish: ({ isAbort, isError }) => {
        if (!isAbort && !isError && !following()) app.saves.push(name);
      },
    },
  });
  holder.page = page;
  return {
    transcript: () => page.transcript(),
    status: () => page.chat.status,
    error: () => page.chat.error,
    tab: () => page.session.tab,
    send: (text) => void page.chat.sendMessage({ text }).catch(() => undefined /* onError has it */),
    unmount: () => page.unmount(),
  };
};

const paths: [string, Open][] = [
  ['useChat + useChatSession + useFollowTurns', openPlain],
  ['useDurableChat', openDurable],
];

const coordinations: [string, () => { tabs: TabCoordinationOptions; locks?: MemoryLocks }][] = [
  [
    'Web Locks',
    () => {
      const locks = new MemoryLocks();
      return { tabs: { locks, broadcastChannel: channel }, locks };
    },
  ],
  ['BroadcastChannel lease', () => ({ tabs: { locks: null, broadcastChannel: channel, heartbeatMs: 60 } })],
];

describe.each(coordinations)('issue 19 (%s): a tab that trails the ended turn', (_mode, coordination) => {
  describe.each(paths)('%s', (_path, open) => {
    it('does not block the owner’s next send; it then shows both turns, read-only', async () => {
      const chatId = nextChatId('trailing-tab');
      const { tabs, locks } = coordination();
      const app: App = { saves: [], errors: [], recorder: recordingFetch() };
      const tab1 = open('tab1', chatId, tabs, app);
      let tab2 = open('tab2', chatId, tabs, app);
      const firstTurn = pauseTurn(chatId, 'first', 2);
      tab1.send('first');
      await waitForDom(() => expect(firstTurn.reached).toBe(true), { timeout: 5_000 });
      // Tab 2 reloads mid-turn; its session start (its token) waits until `letStart`.
      let letStart = () => {};
      const started = new Promise<void>((resolve) => {
        letStart = resolve;
      });
      tab2.unmount();
      tab2 = open('tab2', chatId, tabs, app, started);
      await pause(100);
      firstTurn.release();
      await waitForDom(() => expect(tab1.transcript()).toEqual(EXPECTED.slice(0, 2)), { timeout: 5_000 });
      await waitForDom(() => expect([tab1.status(), tab1.tab().owner]).toEqual(['ready', false]));
      // Tab 1 let go; tab 2 (its read of the ended turn still waiting for its start) gets the lock
      // (with the lease, at its next try) and trails: before the fix it kept the lock meanwhile.
      await pause(300);
      expect(tab2.tab()).toMatchObject({ owner: false, following: true });

      tab1.send('second');
      await waitForDom(() => expect(tab1.transcript()).toEqual(EXPECTED), { timeout: 5_000 });
      expect(app.errors).toEqual([]);
      letStart();
      await waitForDom(() => expect(tab2.transcript()).toEqual(EXPECTED), { timeout: 5_000 });
      await waitForDom(() => expect([tab1.status(), tab2.status()]).toEqual(['ready', 'ready']));
      await pause(200);
      expect(tab1.transcript()).toEqual(EXPECTED);
      expect(tab2.transcript()).toEqual(EXPECTED);
      expect(app.errors).toEqual([]);
      expect([tab1.error(), tab2.error()]).toEqual([undefined, undefined]);
      expect(appendKinds(app.recorder.requests)).toEqual(['message', 'message']);
      expect(app.saves).toEqual(['tab1', 'tab1']);
      if (locks !== undefined)
        await waitForDom(() => expect(locks.isHeld(`durable-chat:${chatId}`)).toBe(false));
      tab1.unmount();
      tab2.unmount();
    });
  });
});
