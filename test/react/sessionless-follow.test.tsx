// @vitest-environment happy-dom
// Seen in examples/nextjs (useDurableChat, about half the runs, then every run): a new chat's
// first message, its page reloaded while the app's route was still starting the chat's session,
// another tab open on the chat. The other tab learned of the turn from the record the leaving
// page wrote (live, its append unanswered, no session yet) and followed it, but its resume had no
// session to read and ended with nothing; the reloaded page then started the session and sent
// the message, and the other tab never read the reply (it showed an empty chat, Ready). The
// follow now reads the turn once the record names the session. The same moment with the page
// closed (not reloaded): the other tab takes the turn over, starts the session and sends it.
import { waitFor as waitForDom } from '@testing-library/react';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevServer } from '../../src/dev-server/index.js';
import { httpErrorFromResponse } from '../../src/errors/http-error.js';
import { pauseTurn, startMomentsServer } from '../transport/support/moments.js';
import { appendKinds, nextChatId, recordingFetch } from './support/harness.js';
import {
  type App,
  type Open,
  recordKey,
  relayStorageEvents,
  reloadSlowly,
  type Tab,
  tabsFor,
  twoTabPaths,
} from './support/two-tab-app.js';

let server: DevServer;
beforeAll(async () => {
  server = await startMomentsServer();
});
afterAll(async () => {
  await server.close();
});

const newApp = (): App => ({ saved: [], saves: [], errors: [], recorder: recordingFetch() });

/**
 * Two tabs of a new chat: `page` sends its first message while the app's route has not answered
 * the session's start (held for good), and then leaves (pagehide): its send is noted in the record.
 */
async function sentBeforeSession(open: Open, mode: string, name: string) {
  const chatId = nextChatId(name);
  const tabs = tabsFor(mode);
  const otherApp = newApp();
  const pageApp = newApp();
  const other = open('other', chatId, tabs, otherApp);
  await waitForDom(() => expect(other.status()).toBe('ready'));
  const page = open('page', chatId, tabs, pageApp, new Promise<void>(() => {}));
  page.send('hello');
  // The send has the tab's turn (the lease takes its claim window) and waits for the start.
  await waitForDom(() => expect(page.tab().owner).toBe(true), { timeout: 5_000 });
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(page.transcript()).toEqual(['user: hello']);
  // The app saved the message as it was sent; the page goes (its send noted in the record).
  pageApp.saved = structuredClone(page.messages());
  window.dispatchEvent(new PageTransitionEvent('pagehide', { persisted: false }));
  await waitForDom(() => expect(localStorage.getItem(recordKey(chatId) ?? '')).toContain('pendingAppend'));
  return { chatId, tabs, other, page, otherApp, pageApp };
}

describe.each(twoTabPaths(() => server))('%s', (_path, open) => {
  it.each([['Web Locks'], ['BroadcastChannel lease']])(
    'a new chat’s first message, its page reloaded before the session existed, another tab open (%s): both tabs show the reply, sent once',
    async (mode) => {
      let stopRelay = () => {};
      try {
        const { chatId, tabs, other, page, otherApp, pageApp } = await sentBeforeSession(
          open,
          mode,
          'sessionless-follow',
        );
        // The reload: the new page loads the record and takes the turn; its start is slow (the
        // app's route fetching a token).
        const { tab: reloaded, letStart } = reloadSlowly(page, (until) =>
          open('page reloaded', chatId, tabs, pageApp, until),
        );
        await waitForDom(() => expect(reloaded.tab().owner).toBe(true), { timeout: 5_000 });
        stopRelay = relayStorageEvents(chatId);
        // Meanwhile the other tab learns of the turn from the record and follows it: there is no
        // session to read yet.
        await waitForDom(() => expect(other.tab().following).toBe(true), { timeout: 5_000 });
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(server.inspect(chatId)).toBeUndefined();
        letStart();
        await waitForDom(() => expect(reloaded.transcript()).toHaveLength(2), { timeout: 10_000 });
        await waitForDom(() => expect(reloaded.status()).toBe('ready'), { timeout: 10_000 });
        const expected = reloaded.transcript();
        expect(expected[0]).toBe('user: hello');
        await waitForDom(() => expect(other.transcript()).toEqual(expected), { timeout: 10_000 });
        await waitForDom(() => expect(other.status()).toBe('ready'));
        // Stored once, by the reloaded page (the other tab only reads).
        expect(server.inspect(chatId)?.in.nextSeq).toBe(1);
        expect(appendKinds(otherApp.recorder.requests)).toEqual([]);
        expect(otherApp.errors).toEqual([]);
        expect(pageApp.errors).toEqual([]);
        other.unmount();
        reloaded.unmount();
      } finally {
        stopRelay();
      }
    },
  );

  /**
   * Half a second on (the agent's echo takes milliseconds: a message that reached it would be
   * answered by then), both tabs show the message unanswered and ready, `.in` holds `inRecords`,
   * the other tab appended nothing and nobody saw an error. Both tabs are closed.
   */
  async function endsUnanswered(
    tabs: { chatId: string; other: Tab; reloaded: Tab; otherApp: App; pageApp: App },
    inRecords: number,
  ) {
    const { chatId, other, reloaded, otherApp, pageApp } = tabs;
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(reloaded.transcript()).toEqual(['user: hello']);
    await waitForDom(() => expect(other.transcript()).toEqual(['user: hello']));
    expect(other.status()).toBe('ready');
    expect(server.inspect(chatId)?.in.nextSeq ?? 0).toBe(inRecords);
    expect(appendKinds(otherApp.recorder.requests)).toEqual([]);
    expect(otherApp.errors).toEqual([]);
    expect(pageApp.errors).toEqual([]);
    other.unmount();
    reloaded.unmount();
  }

  /**
   * The page reloaded before the session existed, its start slow; the other tab follows the turn
   * it learned of from the record. `stopWhere` stops the turn before the message went out again.
   */
  async function stoppedBeforeSession(
    mode: string,
    name: string,
    stopWhere: (tabs: { other: Tab; reloaded: Tab }) => Promise<void>,
  ) {
    let stopRelay = () => {};
    try {
      const { chatId, tabs, other, page, otherApp, pageApp } = await sentBeforeSession(open, mode, name);
      const { tab: reloaded, letStart } = reloadSlowly(page, (until) =>
        open('page reloaded', chatId, tabs, pageApp, until),
      );
      await waitForDom(() => expect(reloaded.tab().owner).toBe(true), { timeout: 5_000 });
      stopRelay = relayStorageEvents(chatId);
      await waitForDom(() => expect(other.tab().following).toBe(true), { timeout: 5_000 });
      await stopWhere({ other, reloaded });
      letStart();
      await waitForDom(() => expect(reloaded.status()).toBe('ready'), { timeout: 10_000 });
      await waitForDom(() => expect(other.status()).toBe('ready'), { timeout: 10_000 });
      // Stopped before it went out again: never sent (the reloaded page's start went on).
      await endsUnanswered({ chatId, other, reloaded, otherApp, pageApp }, 0);
    } finally {
      stopRelay();
    }
  }

  it.each([['Web Locks'], ['BroadcastChannel lease']])(
    'a new chat’s first message, its page reloaded before the session existed: stop() in code in the other tab stops it (%s)',
    async (mode) => {
      await stoppedBeforeSession(mode, 'sessionless-stop-other', async ({ other }) => {
        await other.stopInCode();
      });
    },
  );

  it.each([['Web Locks'], ['BroadcastChannel lease']])(
    'a new chat’s first message, its page reloaded before the session existed: Stop in the reloaded page stops it (%s)',
    async (mode) => {
      await stoppedBeforeSession(mode, 'sessionless-stop-reloaded', async ({ reloaded }) => {
        await new Promise((resolve) => setTimeout(resolve, 100));
        reloaded.stop();
        await new Promise((resolve) => setTimeout(resolve, 50));
      });
    },
  );

  it.each([['Web Locks'], ['BroadcastChannel lease']])(
    'a new chat’s first message sent again after a reload: stop() in the other tab, not yet told of the session, stops it (%s)',
    async (mode) => {
      let stopRelay = () => {};
      try {
        const { chatId, tabs, other, page, otherApp, pageApp } = await sentBeforeSession(
          open,
          mode,
          'sessionless-stop-late',
        );
        const pause = pauseTurn(chatId, 'hello', 0);
        const { tab: reloaded, letStart } = reloadSlowly(page, (until) =>
          open('page reloaded', chatId, tabs, pageApp, until),
        );
        await waitForDom(() => expect(reloaded.tab().owner).toBe(true), { timeout: 5_000 });
        stopRelay = relayStorageEvents(chatId);
        await waitForDom(() => expect(other.tab().following).toBe(true), { timeout: 5_000 });
        // The other tab hears nothing more (its storage event still to come): the reloaded page
        // starts the session and sends the message again; the agent has taken it.
        stopRelay();
        letStart();
        await waitForDom(() => expect(pause.reached).toBe(true), { timeout: 10_000 });
        await other.stopInCode();
        stopRelay = relayStorageEvents(chatId);
        await waitForDom(() => expect(reloaded.status()).toBe('ready'), { timeout: 10_000 });
        pause.release();
        // The reloaded page stopped it behind its message (the other tab had no session to append to).
        await endsUnanswered({ chatId, other, reloaded, otherApp, pageApp }, 2);
      } finally {
        stopRelay();
      }
    },
  );

  it.each([['Web Locks'], ['BroadcastChannel lease']])(
    'a new chat’s first message, its page reloaded before the session existed, the route then refusing the start (401): the error shows, the message stays, the other tab is not left waiting (%s)',
    async (mode) => {
      let stopRelay = () => {};
      try {
        const { chatId, tabs, other, page, otherApp, pageApp } = await sentBeforeSession(
          open,
          mode,
          'sessionless-refused',
        );
        let refuse = (_error: unknown) => {};
        const refused = new Promise<void>((_resolve, reject) => {
          refuse = reject;
        });
        page.unmount();
        const reloaded = open('page reloaded', chatId, tabs, pageApp, refused);
        await waitForDom(() => expect(reloaded.tab().owner).toBe(true), { timeout: 5_000 });
        stopRelay = relayStorageEvents(chatId);
        await waitForDom(() => expect(other.tab().following).toBe(true), { timeout: 5_000 });
        // What the route client throws for the app's route answering 401 (signed out meanwhile).
        refuse(httpErrorFromResponse({ status: 401, operation: 'chat route start' }));
        await waitForDom(() => expect(reloaded.status()).toBe('error'), { timeout: 10_000 });
        expect(reloaded.error()).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
        expect(pageApp.errors.map(({ error }) => (error as { code?: string }).code)).toEqual([
          'UNAUTHORIZED',
        ]);
        // The message stays where it was sent; nothing reached the service.
        expect(reloaded.transcript()).toEqual(['user: hello']);
        // The other tab stops following the turn that cannot start, and is ready to send (its own
        // start may well be allowed); it appended nothing and shows the message as the page does.
        await waitForDom(() => expect(other.tab().following).toBe(false), { timeout: 5_000 });
        await waitForDom(() => expect(other.status()).toBe('ready'));
        expect(other.transcript()).toEqual(['user: hello']);
        expect(server.inspect(chatId)).toBeUndefined();
        expect(appendKinds(otherApp.recorder.requests)).toEqual([]);
        expect(otherApp.errors).toEqual([]);
        other.unmount();
        reloaded.unmount();
      } finally {
        stopRelay();
      }
    },
  );

  it.each([['Web Locks'], ['BroadcastChannel lease']])(
    'a new chat’s first message, its page closed before the session existed, another tab open (%s): that tab sends it once and shows the reply',
    async (mode) => {
      const { chatId, other, page, otherApp, pageApp } = await sentBeforeSession(
        open,
        mode,
        'sessionless-close',
      );
      // The tab is closed; the other tab hears of the record it left.
      page.unmount();
      const key = recordKey(chatId) ?? '';
      window.dispatchEvent(
        new StorageEvent('storage', { key, newValue: localStorage.getItem(key), storageArea: localStorage }),
      );
      await waitForDom(() => expect(other.transcript()).toEqual(['user: hello', 'assistant: Echo: hello']), {
        timeout: 10_000,
      });
      await waitForDom(() => expect(other.status()).toBe('ready'));
      // Nothing takes the reply away afterwards (news of the closed tab's turn, told by no one).
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(other.transcript()).toEqual(['user: hello', 'assistant: Echo: hello']);
      expect(server.inspect(chatId)?.in.nextSeq).toBe(1);
      expect(appendKinds(pageApp.recorder.requests)).toEqual([]);
      expect(otherApp.errors).toEqual([]);
      other.unmount();
    },
  );
});
