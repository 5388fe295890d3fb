// @vitest-environment happy-dom
import { waitFor as waitForDom } from '@testing-library/react';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevServer } from '../../src/dev-server/index.js';
import { startMomentsServer } from '../transport/support/moments.js';
import { appendKinds } from './support/harness.js';
import { openTwoTabs, twoTabPaths } from './support/two-tab-app.js';

// The session is closed on the server in the middle of a reply (an admin's close, an account
// deleted): the run ends and `.out` says nothing more. Both tabs end the turn with the close and
// its reason (no tab left reading), and a send afterwards, in either tab or after a reload, is
// refused without a request. Library defaults (the liveness check finds the run gone).
let server: DevServer;
beforeAll(async () => {
  server = await startMomentsServer();
});
afterAll(async () => {
  await server.close();
});

describe.each(twoTabPaths(() => server))('%s', (_path, open) => {
  it.each([['Web Locks'], ['BroadcastChannel lease']])(
    'a session closed mid-reply: both tabs show SESSION_CLOSED with its reason, and nothing is sent after it (%s)',
    async (mode) => {
      const { chatId, tabs, owner, other, ownerApp, otherApp } = await openTwoTabs(
        open,
        mode,
        'close-mid-reply',
      );
      owner.send('first');
      const first = ['user: first', 'assistant: Echo: first'];
      await waitForDom(() => expect(other.transcript()).toEqual(first), { timeout: 10_000 });
      await waitForDom(() => expect(owner.status()).toBe('ready'));
      server.faults.closeMidTurn({ afterChunks: 3, sessionId: chatId, reason: 'account deleted' });
      owner.send('second');
      const closed = { code: 'SESSION_CLOSED', closedReason: 'account deleted' };
      await waitForDom(() => expect(owner.status()).toBe('error'), { timeout: 30_000 });
      expect(owner.error()).toMatchObject(closed);
      expect(owner.error()?.message).toContain('account deleted');
      await waitForDom(() => expect(other.status()).toBe('error'), { timeout: 30_000 });
      expect(other.error()).toMatchObject(closed);
      expect(owner.transcript().slice(0, 3)).toEqual([...first, 'user: second']);
      expect(other.transcript().slice(0, 3)).toEqual([...first, 'user: second']);
      const stored = server.inspect(chatId)?.in.nextSeq;
      expect(stored).toBe(2);
      // A send afterwards, in the other tab, and in the page reloaded: refused, not sent.
      other.send('third');
      await waitForDom(() => expect(otherApp.errors.length).toBeGreaterThan(0));
      expect(otherApp.errors.at(-1)?.error).toMatchObject(closed);
      owner.unmount();
      const reloaded = open('owner reloaded', chatId, tabs, ownerApp);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const before = ownerApp.errors.length;
      reloaded.send('fourth');
      await waitForDom(() => expect(ownerApp.errors.length).toBeGreaterThan(before));
      expect(ownerApp.errors.at(-1)?.error).toMatchObject(closed);
      expect(server.inspect(chatId)?.in.nextSeq).toBe(stored);
      expect(appendKinds(otherApp.recorder.requests)).toEqual([]);
      reloaded.unmount();
      other.unmount();
    },
    60_000,
  );
});
