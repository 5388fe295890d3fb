// @vitest-environment happy-dom
// A tab's `turn-finished` (how its turn ended on its screen) can reach another tab late: after
// that tab has gone on to a turn of its own. A tool approval's continuation writes the same
// assistant message the earlier turn ended with, so applied then, the late news put the message
// back as it was before the approval (examples/nextjs in CI, about 1 run in 36: the owner showed
// the approved reply, then the approval request again, Ready). Late news of an earlier turn
// never rewinds a turn this tab sent.
import { waitFor as waitForDom } from '@testing-library/react';
import type { UIMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevServer } from '../../src/dev-server/index.js';
import { MemoryLocks } from '../session/support/memory-locks.js';
import { pauseTurn, startMomentsServer } from '../transport/support/moments.js';
import { nextChatId, recordingFetch } from './support/harness.js';
import { type App, approvalId, nodeChannel, twoTabPaths } from './support/two-tab-app.js';

let server: DevServer;
beforeAll(async () => {
  server = await startMomentsServer();
});
afterAll(async () => {
  await server.close();
});

const ASK = '/approve ship it';
const EXPECTED = ['user: /approve ship it', 'assistant: [tool-confirm]Confirmed: ship it'];
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Another tab of the chat, as the channel carries it: tells how the approval request's turn ended. */
function tellFinished(chatId: string, messages: UIMessage[]): void {
  const channel = nodeChannel(`durable-chat:${chatId}`);
  const [asked, reply] = messages;
  channel.postMessage({
    type: 'turn-finished',
    tabId: 'a-tab-that-was-slow',
    message: reply,
    answers: asked?.id,
    order: messages.map((message) => message.id),
  });
  setTimeout(() => channel.close(), 50);
}

describe.each(twoTabPaths(() => server))('%s', (_path, open) => {
  it.each([
    ['while the approval’s continuation streams', 2],
    ['before the continuation’s first chunk', 0],
  ] as const)(
    'news of the approval request’s end, heard %s, leaves the approved reply',
    async (_moment, chunk) => {
      const chatId = nextChatId('late-finished');
      const app: App = { saved: [], saves: [], errors: [], recorder: recordingFetch() };
      const tab = open('tab1', chatId, { locks: new MemoryLocks(), broadcastChannel: nodeChannel }, app);
      tab.send(ASK);
      await waitForDom(() => expect(approvalId(tab)).toBeDefined(), { timeout: 5_000 });
      await waitForDom(() => expect(tab.status()).toBe('ready'));
      const asked = structuredClone(tab.messages());
      const continuation = pauseTurn(chatId, '', chunk);
      await tab.approve(approvalId(tab) ?? '');
      await waitForDom(() => expect(continuation.reached).toBe(true), { timeout: 5_000 });
      tellFinished(chatId, asked);
      await pause(100);
      continuation.release();
      await waitForDom(() => expect(tab.transcript()).toEqual(EXPECTED), { timeout: 5_000 });
      await waitForDom(() => expect(tab.status()).toBe('ready'));
      await pause(300);
      expect(tab.transcript()).toEqual(EXPECTED);
      expect(app.errors).toEqual([]);
      tab.unmount();
    },
  );
});

// A tab that opens (its `resume: true` finds no live turn) and sends at once: useChat's status
// goes `ready` between that empty resume and the send, and the tab told the other tabs that a turn
// had ended showing its message alone. A tab that shows that turn later applied the news once its
// own read ended and took the reply away (for good when the sender had closed meanwhile).
describe.each(twoTabPaths(() => server))('%s', (_path, open) => {
  it('a tab that sends as it opens tells the other tabs of its reply only', async () => {
    const chatId = nextChatId('send-on-open');
    const app: App = { saved: [], saves: [], errors: [], recorder: recordingFetch() };
    const heard: { type: string; order?: string[]; message?: unknown }[] = [];
    const channel = nodeChannel(`durable-chat:${chatId}`);
    channel.addEventListener('message', (event) => heard.push(event.data as (typeof heard)[number]));
    try {
      const tab = open('tab', chatId, { locks: new MemoryLocks(), broadcastChannel: nodeChannel }, app);
      tab.send('hello');
      await waitForDom(() => expect(tab.transcript()).toEqual(['user: hello', 'assistant: Echo: hello']), {
        timeout: 5_000,
      });
      await waitForDom(() => expect(tab.status()).toBe('ready'));
      await pause(200);
      const finished = heard.filter((message) => message.type === 'turn-finished');
      expect(finished.length).toBeGreaterThan(0);
      for (const news of finished) {
        expect(news.order).toHaveLength(2);
        expect(news.message).toBeDefined();
      }
      tab.unmount();
    } finally {
      channel.close();
    }
  });
});
