// @vitest-environment happy-dom
// Seen in a Vite app in Chromium (the packed package): a second tab showed the first turn it
// followed live, but on the next one its text stopped after about a second and it said Ready
// until the owner's reply ended. It learned of that turn from the owner's announcement before
// the agent wrote anything, and resumed with a settled-peek: the server found `.out` ending on
// the previous turn-complete and closed the read after about 1 s (the spec's peek mode, which
// must not be sent right after a submit). A tab that follows another tab's turn does not peek.
import { waitFor as waitForDom } from '@testing-library/react';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevServer } from '../../src/dev-server/index.js';
import { pauseTurn, startMomentsServer } from '../transport/support/moments.js';
import { appendKinds } from './support/harness.js';
import { openTwoTabs, twoTabPaths } from './support/two-tab-app.js';

let server: DevServer;
beforeAll(async () => {
  server = await startMomentsServer();
});
afterAll(async () => {
  await server.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(twoTabPaths(() => server))('%s', (_path, open) => {
  it.each([['Web Locks'], ['BroadcastChannel lease']])(
    'a second tab follows the next turn live while the agent has not written its first chunk (%s)',
    async (mode) => {
      const { chatId, owner, other, ownerApp, otherApp } = await openTwoTabs(open, mode, 'follow-unstarted');
      owner.send('first');
      const first = ['user: first', 'assistant: Echo: first'];
      await waitForDom(() => expect(other.transcript()).toEqual(first), { timeout: 10_000 });
      await waitForDom(() => expect(owner.status()).toBe('ready'));
      await waitForDom(() => expect(other.status()).toBe('ready'));
      // The agent takes its time before the next reply's first chunk (a model thinking).
      const pause = pauseTurn(chatId, 'second', 0);
      owner.send('second');
      await waitForDom(() => expect(pause.reached).toBe(true), { timeout: 10_000 });
      // Following: 'submitted' until the first chunk.
      await waitForDom(() => expect(other.tab().following).toBe(true), { timeout: 5_000 });
      await waitForDom(() => expect(other.status()).not.toBe('ready'), { timeout: 5_000 });
      // Longer than the server holds a settled peek (about 1 s): the other tab still reads.
      await sleep(1_800);
      expect(other.status()).not.toBe('ready');
      expect(owner.status()).not.toBe('ready');
      pause.release();
      const both = [...first, 'user: second', 'assistant: Echo: second'];
      await waitForDom(() => expect(owner.transcript()).toEqual(both), { timeout: 10_000 });
      await waitForDom(() => expect(other.transcript()).toEqual(both), { timeout: 10_000 });
      await waitForDom(() => expect(other.status()).toBe('ready'));
      expect(appendKinds(otherApp.recorder.requests)).toEqual([]);
      expect(otherApp.errors).toEqual([]);
      expect(ownerApp.errors).toEqual([]);
      owner.unmount();
      other.unmount();
    },
  );
});
