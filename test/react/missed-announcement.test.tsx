// @vitest-environment happy-dom
// Issue 19 item 10, seen in examples/nextjs: a tab still loading when another tab started a
// turn loaded the record from just before that turn (not live) and never heard the announcement
// (posted before its BroadcastChannel existed). It then learned of the turn only from the
// `storage` event, and with a channel it waited for an announcement that had gone by: it never
// showed the turn (nor, later, the user's message of it).
import { BroadcastChannel as NodeBroadcastChannel } from 'node:worker_threads';
import { waitFor as waitForDom } from '@testing-library/react';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevServer } from '../../src/dev-server/index.js';
import type { BroadcastChannelLike } from '../../src/session/tab-channel.js';
import { MemoryLocks } from '../session/support/memory-locks.js';
import { pauseTurn, startMomentsServer } from '../transport/support/moments.js';
import { appendKinds, chatOptions, mountChat, nextChatId, recordingFetch } from './support/harness.js';

let server: DevServer;
beforeAll(async () => {
  server = await startMomentsServer();
});
afterAll(async () => {
  await server.close();
});

const channelOn = (prefix: string) => (name: string) =>
  new NodeBroadcastChannel(`${prefix}${name}`) as unknown as BroadcastChannelLike;

/** The record key of `chatId` in this window's localStorage. */
function recordKey(chatId: string): string {
  for (let index = 0; index < localStorage.length; index += 1) {
    const key = localStorage.key(index);
    if (key?.endsWith(chatId) === true) return key;
  }
  throw new Error(`no record for ${chatId}`);
}

// With Web Locks, and with the BroadcastChannel lease only (no locks).
describe.each([['Web Locks'], ['BroadcastChannel lease']])(
  'a tab that missed the announcement of a turn (%s)',
  (mode) => {
    it('follows the turn the storage event tells of: the message and the reply show, nothing is sent', async () => {
      const chatId = nextChatId('missed-announcement');
      const locks = mode === 'Web Locks' ? new MemoryLocks() : null;
      const owner = recordingFetch();
      const late = recordingFetch();
      const open = (fetch: typeof globalThis.fetch, channels: (name: string) => BroadcastChannelLike) => {
        const { persistence: _memory, retry: _shortened, ...options } = chatOptions(server, chatId);
        return mountChat({
          ...options,
          persistence: 'local',
          tabs: { locks, broadcastChannel: channels },
          fetch,
          clientData: { delayMs: 5 },
        });
      };
      const a = open(owner.fetch, channelOn(''));
      const paused = pauseTurn(chatId, 'hello there', 2);
      void a.run((current) => current.sendMessage({ text: 'hello there' }));
      await waitForDom(() => expect(paused.reached).toBe(true), { timeout: 5_000 });
      // Tab b loads the record from just before A's turn (here: none yet), on a channel that
      // carried nothing of A's announcement (it went by before b's channel existed).
      const key = recordKey(chatId);
      const record = localStorage.getItem(key) ?? '';
      localStorage.removeItem(key);
      const b = open(late.fetch, channelOn('elsewhere:'));
      await waitForDom(() => expect(b.current.session.state.chatId).toBe(chatId));
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(b.current.session.state.turnLive).toBe(false);
      // A's record lands; b's window hears of it by the storage event (happy-dom fires none within a window).
      localStorage.setItem(key, record);
      window.dispatchEvent(
        new StorageEvent('storage', { key, newValue: localStorage.getItem(key), storageArea: localStorage }),
      );
      paused.release();
      await waitForDom(() => expect(a.current.status).toBe('ready'), { timeout: 5_000 });
      const expected = a.transcript();
      expect(expected).toHaveLength(2);
      await waitForDom(() => expect(b.transcript()).toEqual(expected), { timeout: 5_000 });
      expect(appendKinds(late.requests)).toEqual([]);
      expect(appendKinds(owner.requests)).toEqual(['message']);
      a.unmount();
      b.unmount();
    });
  },
);
