// @vitest-environment happy-dom
// Seen in a Vite app in Chromium (the packed package): a follow-up message sent just before the
// tab was closed or reloaded (within about 20 ms) was never sent, and no tab showed it. The send
// was still waiting for the tab's turn (the browser grants a lock in a later task), before it
// reached the transport, which notes a send the page leaves. It is noted from the moment it is
// sent: the page that opens the chat next (a reload, the tab opened again), or a tab that takes
// the turn over, sends it, once.
import { waitFor as waitForDom } from '@testing-library/react';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevServer } from '../../src/dev-server/index.js';
import type { LockManagerLike } from '../../src/session/tab-channel.js';
import type { TabCoordinationOptions } from '../../src/session/tab-coordinator.js';
import { MemoryLocks } from '../session/support/memory-locks.js';
import { pauseTurn, startMomentsServer } from '../transport/support/moments.js';
import { appendKinds, nextChatId } from './support/harness.js';
import { newApp, nodeChannel, relayStorageEvents, twoTabPaths } from './support/two-tab-app.js';

let server: DevServer;
beforeAll(async () => {
  server = await startMomentsServer();
});
afterAll(async () => {
  await server.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One tab's Web Locks as a browser grants them: in a later task, not at once; a request of a
 * tab that was closed meanwhile goes with it (refused here, so that tab's send ends).
 */
function lockGrantedLater(locks: MemoryLocks) {
  const tab = { closed: false };
  const manager: LockManagerLike = {
    request: (name, options, callback) =>
      sleep(20).then(() =>
        tab.closed
          ? Promise.reject(new DOMException('the tab was closed', 'AbortError'))
          : locks.request(name, options, callback),
      ),
  };
  return { manager, tab };
}

describe.each(twoTabPaths(() => server))('%s', (_path, open) => {
  it.each([['Web Locks'], ['BroadcastChannel lease']])(
    'a follow-up sent right before its tab closes (%s): the chat opened again sends it once and shows the reply',
    async (mode) => {
      const chatId = nextChatId('send-then-leave');
      const locks = new MemoryLocks();
      const tabsOf = (manager: LockManagerLike): TabCoordinationOptions => ({
        locks: mode === 'Web Locks' ? manager : null,
        broadcastChannel: nodeChannel,
      });
      const app = newApp();
      const pageLocks = lockGrantedLater(locks);
      const page = open('page', chatId, tabsOf(pageLocks.manager), app);
      page.send('first');
      const first = ['user: first', 'assistant: Echo: first'];
      await waitForDom(() => expect(page.transcript()).toEqual(first), { timeout: 10_000 });
      await waitForDom(() => expect(page.status()).toBe('ready'));
      page.send('second');
      // The send waits for the tab's turn; the tab is closed meanwhile.
      await sleep(5);
      expect(server.inspect(chatId)?.in.nextSeq).toBe(1);
      app.saved = structuredClone(page.messages()); // the app saved what it showed
      window.dispatchEvent(new PageTransitionEvent('pagehide', { persisted: false }));
      pageLocks.tab.closed = true;
      page.unmount();
      await sleep(50);
      const again = open('opened again', chatId, tabsOf(lockGrantedLater(locks).manager), app);
      const both = [...first, 'user: second', 'assistant: Echo: second'];
      await waitForDom(() => expect(again.transcript()).toEqual(both), { timeout: 10_000 });
      await waitForDom(() => expect(again.status()).toBe('ready'));
      await sleep(300);
      expect(again.transcript()).toEqual(both);
      expect(server.inspect(chatId)?.in.nextSeq).toBe(2);
      // (The closed page's own send ends with its refused lock here; a browser runs none of it.)
      expect(app.errors.filter((error) => error.tab !== 'page')).toEqual([]);
      again.unmount();
    },
  );

  /**
   * How the turn before the follow-up went: `page` drove it, or stopped it mid-reply (the other
   * tab reads it to its end: its cursor goes past the page's), or `other` drove it and the page
   * followed.
   */
  const before = [['the page drove'], ['the page stopped'], ['the other tab drove']] as const;
  describe.each([['Web Locks'], ['BroadcastChannel lease']])('%s', (mode) => {
    it.each(before)(
      'a follow-up sent right before its tab closes, another tab open (%s the turn before): that tab sends it once and shows the reply',
      async (previous) => {
        const chatId = nextChatId('send-then-leave-other');
        const locks = new MemoryLocks();
        const tabsOf = (manager: LockManagerLike): TabCoordinationOptions => ({
          locks: mode === 'Web Locks' ? manager : null,
          broadcastChannel: nodeChannel,
        });
        const pageApp = newApp();
        const otherApp = newApp();
        const stopRelay = relayStorageEvents(chatId);
        try {
          const other = open('other', chatId, tabsOf(locks), otherApp);
          await waitForDom(() => expect(other.status()).toBe('ready'));
          const pageLocks = lockGrantedLater(locks);
          const page = open('page', chatId, tabsOf(pageLocks.manager), pageApp);
          const paused = previous === 'the page stopped' ? pauseTurn(chatId, 'first', 4) : undefined;
          (previous === 'the other tab drove' ? other : page).send('first');
          if (paused !== undefined) {
            await waitForDom(() => expect(paused.reached).toBe(true), { timeout: 10_000 });
            await waitForDom(() => expect(other.transcript()).toHaveLength(2), { timeout: 10_000 });
            page.stop();
            await sleep(50);
            paused.release();
          }
          await waitForDom(() => expect(other.status()).toBe('ready'), { timeout: 10_000 });
          await waitForDom(() => expect(page.status()).toBe('ready'), { timeout: 10_000 });
          await sleep(300);
          const first = page.transcript();
          expect(other.transcript()).toEqual(first);
          page.send('second');
          await sleep(5);
          expect(server.inspect(chatId)?.in.nextSeq).toBe(paused === undefined ? 1 : 2);
          window.dispatchEvent(new PageTransitionEvent('pagehide', { persisted: false }));
          pageLocks.tab.closed = true;
          page.unmount();
          const both = [...first, 'user: second', 'assistant: Echo: second'];
          await waitForDom(() => expect(other.transcript()).toEqual(both), { timeout: 10_000 });
          await waitForDom(() => expect(other.status()).toBe('ready'));
          await sleep(300);
          expect(other.transcript()).toEqual(both);
          expect(server.inspect(chatId)?.in.nextSeq).toBe(paused === undefined ? 2 : 3);
          const ownBefore = previous === 'the other tab drove' ? ['message'] : [];
          expect(appendKinds(otherApp.recorder.requests)).toEqual([...ownBefore, 'message']);
          expect(otherApp.errors).toEqual([]);
          other.unmount();
        } finally {
          stopRelay();
        }
      },
    );
  });
});
