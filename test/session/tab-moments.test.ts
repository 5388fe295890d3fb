import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevServer } from '../../src/dev-server/index.js';
import { uniqueChatId, waitFor } from '../transport/support/dev-server-fixture.js';
import {
  type AgentPause,
  BOUND_MS,
  echoReply,
  MATRIX_OTHER_TEXT,
  MATRIX_TEXT,
  MID_REPLY_CHUNK,
  pauseTurn,
  startMomentsServer,
} from '../transport/support/moments.js';
import { type CoreTab, type TabMode, TabsWorld } from './support/core-tabs.js';

/**
 * Issue 19's tab matrix without React: tab A sends; at one moment of that turn tab A reloads,
 * tab A closes (B, open from the start, takes the turn over),
 * a second tab opens, or a second tab (open from the start) sends. Each tab is the session
 * core a binding mounts (`support/core-tabs.ts`), against the dev server over loopback with
 * the library's default options, in both coordination modes (Web Locks; BroadcastChannel
 * only, the lease, as in a browser without `navigator.locks`). Each cell asserts: every tab
 * ends with the same transcript, the agent got the expected appends, only the owner saved the
 * turn and no other error than the loser's `TURN_IN_OTHER_TAB` reached a chat, and no
 * connection is left open once the tabs are closed.
 */

let server: DevServer;
beforeAll(async () => {
  server = await startMomentsServer();
});
afterAll(async () => {
  await server.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const TEXT = MATRIX_TEXT;
const OTHER = MATRIX_OTHER_TEXT;
const reply = echoReply;

interface MomentState {
  pause?: AgentPause;
  answeredBefore?: number;
}

interface Moment {
  /** The action lands while A's turn runs (else after its turn-complete). */
  duringTurn: boolean;
  arm(owner: CoreTab): MomentState;
  /** A tab open from the start shows the moment too (what a user there acts on). */
  caughtUp(tab: CoreTab): boolean;
  reach(owner: CoreTab, state: MomentState): Promise<void>;
  release(world: TabsWorld, state: MomentState): Promise<void>;
}

const lastText = (tab: CoreTab) => {
  const last = tab.chat.messages.at(-1);
  return last?.role === 'assistant'
    ? last.parts.map((part) => (part.type === 'text' ? part.text : '')).join('')
    : '';
};

const MOMENTS: Record<string, Moment> = {
  'before the append is sent': {
    duringTurn: true,
    arm: (owner) => {
      owner.page.holdAppendRequest(TEXT);
      return {};
    },
    caughtUp: () => true,
    reach: (owner) => waitFor(() => owner.page.holding === 1, BOUND_MS, 'the held append request'),
    release: async (world) => {
      await sleep(20);
      for (const tab of world.tabs) tab.page.release();
    },
  },
  'append in flight': {
    duringTurn: true,
    arm: (owner) => {
      owner.page.holdAppendResponse(TEXT);
      return { pause: pauseTurn(owner.handle.chatId, TEXT, 0) };
    },
    caughtUp: () => true,
    reach: (owner, { pause }) =>
      waitFor(
        () => owner.page.holding === 1 && pause?.reached === true,
        BOUND_MS,
        'the stored, unanswered append',
      ),
    release: async (world, { pause }) => {
      for (const tab of world.tabs) tab.page.release();
      pause?.release();
    },
  },
  'stored, no chunk yet': {
    duringTurn: true,
    arm: (owner) => ({
      pause: pauseTurn(owner.handle.chatId, TEXT, 0),
      answeredBefore: owner.page.appendsAnswered,
    }),
    caughtUp: (tab) => tab.transcript()[0] === `user: ${TEXT}`,
    reach: (owner, { pause, answeredBefore = 0 }) =>
      waitFor(
        () => pause?.reached === true && owner.page.appendsAnswered > answeredBefore,
        BOUND_MS,
        'the answered append of a silent turn',
      ),
    release: async (_world, { pause }) => {
      await sleep(300);
      pause?.release();
    },
  },
  'mid-reply': {
    duringTurn: true,
    arm: (owner) => ({ pause: pauseTurn(owner.handle.chatId, TEXT, MID_REPLY_CHUNK) }),
    caughtUp: (tab) => lastText(tab).length > 0,
    reach: (owner, { pause }) =>
      waitFor(() => pause?.reached === true && lastText(owner).length > 0, BOUND_MS, 'the first deltas'),
    release: async (_world, { pause }) => {
      await sleep(50);
      pause?.release();
    },
  },
  'between turn-complete and trim': {
    duringTurn: false,
    arm: () => ({}),
    caughtUp: (tab) => !tab.busy && tab.transcript().at(-1) === reply(TEXT),
    reach: async (owner) => {
      await waitFor(
        () => owner.chat.status === 'ready' && owner.transcript().at(-1) === reply(TEXT),
        BOUND_MS,
        'the turn to end',
      );
    },
    release: async () => {},
  },
};

interface Cell {
  /** Tabs open and the owner, after the action. */
  tabs: CoreTab[];
  /** The tab whose own send starts the turn (A, or A after its reload). */
  refusedTab?: string;
  expected: string[];
  appends: number;
  /** Tabs that save a turn (onFinish, not following), in order. */
  savers: string[];
  /**
   * Tabs that only show A's turn while A is still there: they never send an append, not even A's
   * unanswered one found in the shared record (it is A's to send; the server would store it once,
   * but the tab would then read the turn as its own).
   */
  readOnly?: CoreTab[];
}

type Action = (world: TabsWorld, a: CoreTab, b: CoreTab | undefined, moment: Moment) => Promise<Cell>;

const ACTIONS: Record<string, { opensSecondTab: boolean; apply: Action }> = {
  'A reloads': {
    opensSecondTab: true,
    apply: async (world, a, b) => {
      const reloaded = await world.reload(a);
      // Who saves depends on who reads the turn to its end; at most one tab may.
      return {
        tabs: [reloaded, b as CoreTab],
        expected: [`user: ${TEXT}`, reply(TEXT)],
        appends: 1,
        savers: [],
      };
    },
  },
  'A closes': {
    opensSecondTab: true,
    apply: async (_world, a, b) => {
      // The page goes away for good (its lock or lease with it): B takes the turn over and,
      // when A's append was still unanswered, sends it for A (under its part id).
      await a.kill();
      return {
        tabs: [b as CoreTab],
        expected: [`user: ${TEXT}`, reply(TEXT)],
        appends: 1,
        savers: [],
      };
    },
  },
  'a second tab opens': {
    opensSecondTab: false,
    apply: async (world, a) => {
      const opened = world.open('b', a.saved());
      return {
        tabs: [a, opened],
        expected: [`user: ${TEXT}`, reply(TEXT)],
        appends: 1,
        savers: ['a'],
        readOnly: [opened],
      };
    },
  },
  'the second tab sends': {
    opensSecondTab: true,
    apply: async (world, a, b, moment) => {
      const second = b as CoreTab;
      await waitFor(() => moment.caughtUp(second), BOUND_MS, 'the second tab to show the moment');
      void second.send(OTHER);
      // Held past the send's grace for an owner letting go: refused, as another tab's turn is live.
      if (moment.duringTurn) {
        await waitFor(() => world.log.errors.length > 0, BOUND_MS, 'the refusal');
        return {
          tabs: [a, second],
          refusedTab: 'b',
          expected: [`user: ${TEXT}`, reply(TEXT)],
          appends: 1,
          savers: ['a'],
        };
      }
      return {
        tabs: [a, second],
        expected: [`user: ${TEXT}`, reply(TEXT), `user: ${OTHER}`, reply(OTHER)],
        appends: 2,
        savers: ['a', 'b'],
      };
    },
  },
};

const MODES: TabMode[] = ['Web Locks', 'BroadcastChannel only'];

/**
 * Cells that fail in some runs of the whole file, skipped until understood (none now). The
 * last one, BroadcastChannel only, A reloads before its append is sent: B merged A's announced
 * record and wrote its own copy back (a `found` turn without A's unanswered append) before it
 * held the record as a follower; A' loaded that, could not send the append again, and B
 * followed A' forever (fixed in `TabLife`: the hold is taken before the merge).
 */
const INTERMITTENT = new Set<string>([]);

describe.each(MODES)('tabs without React (%s)', (mode) => {
  for (const [momentName, moment] of Object.entries(MOMENTS)) {
    for (const [actionName, action] of Object.entries(ACTIONS)) {
      const name = `${actionName} at "${momentName}"`;
      const run = INTERMITTENT.has(`${mode}: ${name}`) ? it.skip : it;
      run(name, async () => {
        const chatId = uniqueChatId('core-tabs');
        const world = new TabsWorld(server, chatId, mode);
        // What the tabs told each other, for a failure's message.
        const spy = new BroadcastChannel(`durable-chat:${chatId}`);
        const heard: string[] = [];
        spy.onmessage = (event: MessageEvent) => {
          const data = event.data as { type?: string; tabId?: string };
          heard.push(`${Date.now() % 100_000} ${data.type} ${data.tabId?.slice(0, 4)}`);
        };
        try {
          const a = world.open('a');
          const b = action.opensSecondTab ? world.open('b') : undefined;
          await Promise.all(world.tabs.map((tab) => tab.mounted));
          const state = moment.arm(a);
          void a.send(TEXT);
          await moment.reach(a, state);
          const cell = await action.apply(world, a, b, moment);
          await moment.release(world, state);

          const describeTabs = () =>
            JSON.stringify([
              world.server.inspect(chatId)?.in,
              world.storage.records.get(chatId),
              ...cell.tabs.map((tab) => ({
                tab: tab.name,
                status: tab.chat.status,
                transcript: tab.transcript(),
                state: tab.handle.getTabState(),
              })),
            ]);
          // Described when the wait gives up (the state then, not at its start).
          await waitFor(
            () =>
              world.appendsStored() === cell.appends &&
              cell.tabs.every(
                (tab) => !tab.busy && JSON.stringify(tab.transcript()) === JSON.stringify(cell.expected),
              ),
            BOUND_MS,
            'every tab to show the turn',
          ).catch((error: unknown) => {
            throw new Error(`${String(error)}: ${describeTabs()} ${JSON.stringify(heard)}`);
          });
          // Late work (a takeover, a stray tool call or save) would show within this.
          await sleep(300);
          for (const tab of cell.tabs)
            expect({ tab: tab.name, transcript: tab.transcript() }).toEqual({
              tab: tab.name,
              transcript: cell.expected,
            });
          expect(world.appendsStored()).toBe(cell.appends);
          for (const tab of cell.readOnly ?? [])
            expect({ tab: tab.name, appendsSent: tab.page.appendsSent }).toEqual({
              tab: tab.name,
              appendsSent: 0,
            });
          const errors = world.log.errors.map(({ tab, error }) => ({
            tab,
            code: (error as { code?: string }).code ?? String(error),
          }));
          expect(errors).toEqual(
            cell.refusedTab === undefined ? [] : [{ tab: cell.refusedTab, code: 'TURN_IN_OTHER_TAB' }],
          );
          const savers = world.log.saves.map((save) => save.tab);
          if (actionName === 'A reloads' || actionName === 'A closes')
            expect(savers.length).toBeLessThanOrEqual(1);
          else expect(savers).toEqual(cell.savers);
        } finally {
          spy.close();
          expect(await world.close()).toBe(0);
        }
      });
    }
  }
});
