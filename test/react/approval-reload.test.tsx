// @vitest-environment happy-dom
// Issue 19 item 10: two tabs on one chat; tab 1 sends a message whose reply asks for a tool
// approval and approves it; tab 2 reloads meanwhile, at each moment of that turn. The app is
// written as the README says: the transcript is saved in `onFinish` (not when aborted, failed
// or following another tab's turn) and loaded back as `messages` on a reload. Every moment:
// the tool runs once, both tabs end with the same transcript, no error, only tab 1 saves.
import { waitFor as waitForDom } from '@testing-library/react';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevServer } from '../../src/dev-server/index.js';
import type { TabCoordinationOptions } from '../../src/session/tab-coordinator.js';
import { MemoryLocks } from '../session/support/memory-locks.js';
import { type AgentPause, pauseTurn, startMomentsServer } from '../transport/support/moments.js';
import {
  nextChatId,
  type RecordedRequest,
  recordingFetch,
  transcript as transcriptOf,
} from './support/harness.js';
import { type App, approvalId, nodeChannel, reloadSlowly, twoTabPaths } from './support/two-tab-app.js';

let server: DevServer;
beforeAll(async () => {
  server = await startMomentsServer();
});
afterAll(async () => {
  await server.close();
});

const channel = nodeChannel;
const appends = (requests: RecordedRequest[]) =>
  requests.filter((request) => request.method === 'POST' && request.path.endsWith('/in/append'));
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ASK = '/approve ship it';
const EXPECTED = ['user: /approve ship it', 'assistant: [tool-confirm]Confirmed: ship it'];

/** When tab 2 reloads, in turn 1 (the approval request) or turn 2 (the approved tool's output). */
const moments = [
  { moment: 'while the approval request streams', turn: 1, beforeChunk: 2 },
  { moment: 'after the approval request, before the approval', turn: 1.5, beforeChunk: 0 },
  { moment: 'right after the approval', turn: 2, beforeChunk: 0 },
  { moment: 'after the tool output, before the text', turn: 2, beforeChunk: 4 },
] as const;

/**
 * The moment between the approval request and the approval failed about 1 run in 8 under
 * load: tab 2, still reading turn 1 behind tab 1, wrote the shared record back to "turn 1
 * live", and reloaded on it (it then replayed turn 1 as its own: saved it, appended a stop).
 * Repeated so that a failure that rare cannot pass unnoticed.
 */
const REPEATS = 12;
const cells = moments.flatMap((entry) =>
  Array.from({ length: Number(entry.turn) === 1.5 ? REPEATS : 1 }, (_, index) => ({
    ...entry,
    run: index + 1,
  })),
);

const paths = twoTabPaths(() => server);

const coordinations: [string, () => TabCoordinationOptions][] = [
  ['Web Locks', () => ({ locks: new MemoryLocks(), broadcastChannel: channel })],
  ['BroadcastChannel lease', () => ({ locks: null, broadcastChannel: channel })],
];

describe.each(coordinations)(
  'item 10 (%s): a tab reloaded during another tab’s tool-approval turn',
  (_mode, coordination) => {
    describe.each(paths)('%s', (_path, open) => {
      it.each(cells)(
        'reloaded $moment (run $run): the tool runs once, both tabs end alike, no error, one saver',
        async ({ turn, beforeChunk }) => {
          const chatId = nextChatId('approval-reload');
          const tabs = coordination();
          const app: App = { saved: [], saves: [], errors: [], recorder: recordingFetch() };
          const tab1 = open('tab1', chatId, tabs, app);
          let tab2 = open('tab2', chatId, tabs, app);
          let paused: AgentPause | undefined;
          const reload = () => {
            tab2.unmount();
            tab2 = open('tab2', chatId, tabs, app);
          };
          if (turn === 1) paused = pauseTurn(chatId, ASK, beforeChunk);
          tab1.send(ASK);
          if (paused !== undefined) {
            await waitForDom(() => expect(paused?.reached).toBe(true), { timeout: 5_000 });
            reload();
            await pause(100);
            paused.release();
          }
          await waitForDom(() => expect(approvalId(tab1)).toBeDefined(), { timeout: 5_000 });
          await waitForDom(() => expect(tab1.status()).toBe('ready'));
          if (turn === 1.5) {
            reload();
            await pause(100);
          }
          if (turn === 2) paused = pauseTurn(chatId, '', beforeChunk); // the continuation has no user text
          await tab1.approve(approvalId(tab1) ?? '');
          if (turn === 2 && paused !== undefined) {
            await waitForDom(() => expect(paused?.reached).toBe(true), { timeout: 5_000 });
            reload();
            await pause(100);
            paused.release();
          }
          await waitForDom(() => expect(tab1.transcript()).toEqual(EXPECTED), { timeout: 5_000 });
          await waitForDom(() => expect(tab2.transcript()).toEqual(EXPECTED), { timeout: 5_000 });
          await waitForDom(() => expect([tab1.status(), tab2.status()]).toEqual(['ready', 'ready']));
          await pause(200);
          expect(tab2.transcript()).toEqual(EXPECTED);
          expect(app.errors).toEqual([]);
          expect([tab1.error(), tab2.error()]).toEqual([undefined, undefined]);
          expect(appends(app.recorder.requests)).toHaveLength(2); // the message and the approval
          expect(new Set(app.saves)).toEqual(new Set(['tab1']));
          tab1.unmount();
          tab2.unmount();
        },
      );
    });
  },
);

describe.each(paths)(
  'item 10, one tab (%s): leaving and coming back right after the approval',
  (_path, open) => {
    it('the approved tool’s output and text come back on the saved transcript, once, with no error', async () => {
      const chatId = nextChatId('approval-come-back');
      const tabs = coordinations[0]?.[1]() ?? {};
      const app: App = { saved: [], saves: [], errors: [], recorder: recordingFetch() };
      const first = open('tab1', chatId, tabs, app);
      first.send(ASK);
      await waitForDom(() => expect(approvalId(first)).toBeDefined(), { timeout: 5_000 });
      await waitForDom(() => expect(app.saves).toEqual(['tab1']));
      const paused = pauseTurn(chatId, '', 4);
      await first.approve(approvalId(first) ?? '');
      await waitForDom(() => expect(paused.reached).toBe(true), { timeout: 5_000 });
      first.unmount();
      paused.release();
      await pause(200);
      const back = open('tab1', chatId, tabs, app);
      await waitForDom(() => expect(back.transcript()).toEqual(EXPECTED), { timeout: 5_000 });
      await waitForDom(() => expect(back.status()).toBe('ready'));
      await pause(200);
      expect(app.errors).toEqual([]);
      expect(back.transcript()).toEqual(EXPECTED);
      expect(appends(app.recorder.requests)).toHaveLength(2);
      expect(app.saves).toEqual(['tab1', 'tab1']); // the approval request, then the whole reply
      expect(transcriptOf(app.saved)).toEqual(EXPECTED);
      back.unmount();
    });
  },
);

/**
 * Seen in examples/nextjs (about 1 run in 50 under load): tab 2 reloads while the approval
 * request streams, and its resume reaches the chat late (a reloaded page first fetches a token).
 * Tab 2 must still show the message, the request and the answer, and answer nothing itself.
 * (When the resume starts only after the owner moved on to the continuation, the message is
 * brought back from the turn found at load: test/session/found-turn.test.ts.)
 */
describe.each(paths)('item 10 (%s): a slow reload during the approval request', (_path, open) => {
  it('its resume waits for its token until the request ended: tab 2 shows it all, once, and answers nothing', async () => {
    const chatId = nextChatId('approval-slow-reload');
    const tabs = coordinations[0]?.[1]() ?? {};
    const app: App = { saved: [], saves: [], errors: [], recorder: recordingFetch() };
    const tab1 = open('tab1', chatId, tabs, app);
    let tab2 = open('tab2', chatId, tabs, app);
    const firstTurn = pauseTurn(chatId, ASK, 2);
    tab1.send(ASK);
    await waitForDom(() => expect(firstTurn.reached).toBe(true), { timeout: 5_000 });
    const reloaded = reloadSlowly(tab2, (started) => open('tab2', chatId, tabs, app, started));
    tab2 = reloaded.tab;
    await pause(100);
    firstTurn.release();
    await waitForDom(() => expect(approvalId(tab1)).toBeDefined(), { timeout: 5_000 });
    await waitForDom(() => expect(tab1.status()).toBe('ready'));
    reloaded.letStart();
    await waitForDom(() => expect(approvalId(tab2)).toBeDefined(), { timeout: 5_000 });
    expect(tab2.transcript()[0]).toBe(EXPECTED[0]);
    await waitForDom(() => expect(tab2.status()).toBe('ready'));
    await tab1.approve(approvalId(tab1) ?? '');
    await waitForDom(() => expect(tab1.transcript()).toEqual(EXPECTED), { timeout: 5_000 });
    await waitForDom(() => expect(tab2.transcript()).toEqual(EXPECTED), { timeout: 5_000 });
    await waitForDom(() => expect([tab1.status(), tab2.status()]).toEqual(['ready', 'ready']));
    await pause(200);
    expect(tab1.transcript()).toEqual(EXPECTED);
    expect(tab2.transcript()).toEqual(EXPECTED);
    expect(app.errors).toEqual([]);
    expect(appends(app.recorder.requests)).toHaveLength(2);
    expect(new Set(app.saves)).toEqual(new Set(['tab1']));
    tab1.unmount();
    tab2.unmount();
  });
});
