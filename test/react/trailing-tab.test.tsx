// @vitest-environment happy-dom
// Issue 19: "A trailing tab blocks the owner's next send." Tab 1 owns a turn; tab 2 reloads
// mid-turn and its resume is slow (its session start, the token a reloaded page fetches, waits);
// tab 1's turn ends and tab 1 lets go of the lock; tab 2 gets it while its slow read of tab 1's
// ended turn goes on (`trailing`). Tab 1's user sends the next message: nobody drives a turn,
// so it must go out (it was refused with TURN_IN_OTHER_TAB after ACQUIRE_GRACE_MS), and tab 2,
// once its start is let go, shows both turns, read-only.
import { waitFor as waitForDom } from '@testing-library/react';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevServer } from '../../src/dev-server/index.js';
import type { TabCoordinationOptions } from '../../src/session/tab-coordinator.js';
import { MemoryLocks } from '../session/support/memory-locks.js';
import { pauseTurn, startMomentsServer } from '../transport/support/moments.js';
import { appendKinds, nextChatId } from './support/harness.js';
import {
  newApp,
  nodeChannel,
  type Open,
  reloadSlowly,
  type Tab,
  twoTabPaths,
} from './support/two-tab-app.js';

let server: DevServer;
beforeAll(async () => {
  server = await startMomentsServer();
});
afterAll(async () => {
  await server.close();
});

const channel = nodeChannel;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const paths = twoTabPaths(() => server);

const coordinations: [string, () => { tabs: TabCoordinationOptions; locks?: MemoryLocks }][] = [
  [
    'Web Locks',
    () => {
      const locks = new MemoryLocks();
      return { tabs: { locks, broadcastChannel: channel }, locks };
    },
  ],
  ['BroadcastChannel lease', () => ({ tabs: { locks: null, broadcastChannel: channel } })],
];

/**
 * The lease's messages on a chat's channel, as a third page hears them: true once a tab other
 * than the one that started the first turn took the turn and let it go (its `released`).
 */
function leaseHandedBack(chatId: string): { seen: () => boolean; close: () => void } {
  const listener = channel(`durable-chat:${chatId}`);
  let firstOwner: string | undefined;
  let handedBack = false;
  listener.addEventListener('message', (event) => {
    const { type, tabId } = event.data as { type: string; tabId: string };
    if (type === 'turn-started') firstOwner ??= tabId;
    else if (type === 'released' && firstOwner !== undefined && tabId !== firstOwner) handedBack = true;
  });
  return { seen: () => handedBack, close: () => listener.close() };
}

/**
 * Tab 1 sends 'first'; tab 2 reloads mid-turn with its session start (its token) held; the turn
 * ends and tab 1 lets go. Tab 2 (its read of the ended turn still waiting for its start) gets the
 * lock (with the lease, at its next try) and trails: before the fix it kept the lock meanwhile.
 */
async function trailingAfterFirstTurn(
  open: Open,
  tabs: TabCoordinationOptions,
  prefix: string,
  { handedBack = true } = {},
) {
  const chatId = nextChatId(prefix);
  const app = newApp();
  const lease = tabs.locks === null && handedBack ? leaseHandedBack(chatId) : undefined;
  const tab1 = open('tab1', chatId, tabs, app);
  const firstTurn = pauseTurn(chatId, 'first', 2);
  const opened = open('tab2', chatId, tabs, app);
  tab1.send('first');
  await waitForDom(() => expect(firstTurn.reached).toBe(true), { timeout: 5_000 });
  const reloaded = reloadSlowly(opened, (started) => open('tab2', chatId, tabs, app, started));
  await pause(100);
  firstTurn.release();
  await waitForDom(() => expect(tab1.transcript()).toEqual(['user: first', 'assistant: Echo: first']), {
    timeout: 5_000,
  });
  await waitForDom(() => expect([tab1.status(), tab1.tab().owner]).toEqual(['ready', false]));
  await pause(300);
  // With the lease, tab 2's next try comes only after its claim on the turn it found at load has
  // run its window (a heartbeat and more): the case is set once it took the turn and let it go.
  if (lease !== undefined) {
    await waitForDom(() => expect(lease.seen()).toBe(true), { timeout: 5_000 });
    lease.close();
  }
  if (handedBack) expect(reloaded.tab.tab()).toMatchObject({ owner: false, following: true });
  return { chatId, app, tab1, tab2: reloaded.tab, letStart: reloaded.letStart };
}

/**
 * Tab 2 no longer follows (its read of the ended turn is over); tab 1's next turn then shows in
 * both tabs, and both end with the same transcript.
 */
async function showsNextTurnOnceOver(tab1: Tab, tab2: Tab): Promise<void> {
  await waitForDom(() => expect(tab2.tab()).toMatchObject({ owner: false, following: false }), {
    timeout: 5_000,
  });
  tab1.send('second');
  for (const tab of [tab1, tab2])
    await waitForDom(
      () => expect(tab.transcript().slice(-2)).toEqual(['user: second', 'assistant: Echo: second']),
      {
        timeout: 5_000,
      },
    );
  await waitForDom(() => expect([tab1.status(), tab2.status()]).toEqual(['ready', 'ready']));
  await pause(200);
  expect(tab2.transcript()).toEqual(tab1.transcript());
}

describe.each(coordinations)('issue 19 (%s): a tab that trails the ended turn', (_mode, coordination) => {
  describe.each(paths)('%s', (_path, open) => {
    it.each([
      ['the owner’s next send', ['second'], true],
      ['two more turns of the owner', ['second', 'third'], true],
      // With the lease, the owner's turns come while the reloaded tab's claim on the turn it found
      // at load still runs (a heartbeat and more): it has not read that turn when they are announced.
      ['two more turns of the owner, before it took the ended turn', ['second', 'third'], false],
    ])('does not block %s; it then shows every turn, read-only', async (_sends, later, handedBack) => {
      const expected = ['first', ...later].flatMap((text) => [`user: ${text}`, `assistant: Echo: ${text}`]);
      const { tabs, locks } = coordination();
      const { chatId, app, tab1, tab2, letStart } = await trailingAfterFirstTurn(open, tabs, 'trailing-tab', {
        handedBack,
      });

      for (const [index, text] of later.entries()) {
        tab1.send(text);
        const shown = expected.slice(0, 4 + 2 * index);
        await waitForDom(() => expect(tab1.transcript()).toEqual(shown), { timeout: 5_000 });
        await waitForDom(() => expect(tab1.status()).toBe('ready'));
      }
      expect(app.errors).toEqual([]);
      letStart();
      await waitForDom(() => expect(tab2.transcript()).toEqual(expected), { timeout: 5_000 });
      await waitForDom(() => expect([tab1.status(), tab2.status()]).toEqual(['ready', 'ready']));
      await pause(200);
      expect(tab1.transcript()).toEqual(expected);
      expect(tab2.transcript()).toEqual(expected);
      expect(app.errors).toEqual([]);
      expect([tab1.error(), tab2.error()]).toEqual([undefined, undefined]);
      expect(appendKinds(app.recorder.requests)).toEqual(['message', ...later.map(() => 'message')]);
      expect(app.saves).toEqual(['tab1', ...later.map(() => 'tab1')]);
      if (locks !== undefined)
        await waitForDom(() => expect(locks.isHeld(`durable-chat:${chatId}`)).toBe(false));
      tab1.unmount();
      tab2.unmount();
    });

    // Tab 2's read of the ended turn is refused for good (its fresh token refused too): the read
    // is over though the turn never ended on this page. It must stop trailing then (it stayed
    // `following`, kept the owner's next turns unshown and ignored the record the owner wrote,
    // until the chat was shown again), and show what came after.
    it('stops trailing when its read is refused for good, and shows the owner’s next turn', async () => {
      const { tabs } = coordination();
      const { app, tab1, tab2, letStart } = await trailingAfterFirstTurn(open, tabs, 'trailing-cut');
      server.faults.failOutConnections(2, 403);
      letStart();
      await waitForDom(() => expect(app.errors.map(({ tab }) => tab)).toEqual(['tab2']), { timeout: 5_000 });
      await showsNextTurnOnceOver(tab1, tab2);
      expect(app.errors.map(({ tab }) => tab)).toEqual(['tab2']);
      expect(appendKinds(app.recorder.requests)).toEqual(['message', 'message']);
      expect(app.saves).toEqual(['tab1', 'tab1']);
      tab1.unmount();
      tab2.unmount();
    });

    // Tab 2's user presses Stop on the ended turn it still reads: nothing is left to stop (a stop
    // appended now would reach the next turn: useDurableChat appended one), and the tab stops
    // trailing.
    it('stops trailing when its user stops the read, and shows the owner’s next turn', async () => {
      const { tabs } = coordination();
      const { app, tab1, tab2, letStart } = await trailingAfterFirstTurn(open, tabs, 'trailing-user-stop');
      // Its read is open (unanswered) when the user stops.
      server.faults.hangOutConnections(1);
      letStart();
      await pause(300);
      expect(tab2.tab()).toMatchObject({ owner: false, following: true });
      tab2.stop();
      await showsNextTurnOnceOver(tab1, tab2);
      expect(app.errors).toEqual([]);
      expect(appendKinds(app.recorder.requests)).toEqual(['message', 'message']);
      expect(app.saves).toEqual(['tab1', 'tab1']);
      tab1.unmount();
      tab2.unmount();
    });

    // The owner stops its next turn mid-reply while tab 2 still trails: tab 2 follows that kept
    // turn later, and must end with the reply as the owner ended it (the owner told the other
    // tabs), not with what the agent wrote after the stop.
    it('shows a turn the owner stopped as the owner ended it', async () => {
      const { tabs } = coordination();
      const { chatId, app, tab1, tab2, letStart } = await trailingAfterFirstTurn(open, tabs, 'trailing-stop');

      const secondTurn = pauseTurn(chatId, 'second', 3);
      tab1.send('second');
      await waitForDom(() => expect(secondTurn.reached).toBe(true), { timeout: 5_000 });
      tab1.stop();
      await waitForDom(() => expect(tab1.status()).toBe('ready'), { timeout: 5_000 });
      secondTurn.release();
      await waitForDom(
        () => expect(appendKinds(app.recorder.requests)).toEqual(['message', 'message', 'stop']),
        {
          timeout: 5_000,
        },
      );
      await pause(300);
      const ownerEnded = tab1.transcript();
      expect(ownerEnded.slice(0, 3)).toEqual(['user: first', 'assistant: Echo: first', 'user: second']);
      letStart();
      await waitForDom(() => expect(tab2.transcript()).toEqual(ownerEnded), { timeout: 5_000 });
      await waitForDom(() => expect([tab1.status(), tab2.status()]).toEqual(['ready', 'ready']));
      await pause(300);
      expect(tab1.transcript()).toEqual(ownerEnded);
      expect(tab2.transcript()).toEqual(ownerEnded);
      expect(app.errors).toEqual([]);
      tab1.unmount();
      tab2.unmount();
    });
  });
});
