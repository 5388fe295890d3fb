import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryPersistence } from '../../src/client/persistence.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { TestChat, transcript, uniqueChatId, waitFor } from './support/dev-server-fixture.js';
import { type AgentPause, BOUND_MS, type Device, pauseTurn, ServerPool, World } from './support/moments.js';

/**
 * What users do, and when: every action × every moment of a turn, at the transport level,
 * against the dev server, under the library's DEFAULT options (no shortened retry or
 * liveness option; nothing here needs time to pass, so no clock is injected). Each cell
 * runs the same three-turn conversation through the AI SDK's own Chat with one action
 * injected at one moment: of turn 1 (the first send of a new chat) or of turn 2 (a chat
 * with a history and a turn-complete, so trims, cursors and saved messages matter); the
 * turns after it are the next sends. Each cell asserts:
 * - the final messages equal the fault-free run's, or the documented outcome (`Outcome`):
 *   for stop, the reply cut where it was stopped and every later turn whole; for a reload
 *   before the append was sent, that message never reached the agent; for a send that
 *   overlaps a turn whose reply has not begun, the Chat's own order;
 * - no error reached the Chat on screen, and nothing hangs (every wait is bounded by
 *   `BOUND_MS` of real time);
 * - the chat is not left "live" once its last turn ended;
 * - no `.out` connection is open once the transports are closed;
 * - a second device's chat shows exactly its own message and reply.
 * A new action or moment is one entry in `ACTIONS` / `MOMENTS`. Cells that fail on the
 * current code carry `knownDefect` and run as `it.fails`: the file stays green, and a cell
 * turns red the moment its defect is fixed (remove the marker then). Then seeded random
 * sequences (fast-check's model-based commands) of the cells that hold, across the three
 * turns: `MOMENTS_SEED=n` replays a seed, `MOMENTS_RUNS=n` runs more.
 *
 * A restart of the dev server is not an action here: the fixture cannot restart a server
 * in place (sessions live in the server's memory, and a new one listens on another port).
 */

const TURNS = [
  'hello there, this is the first message',
  'tell me a long story, in many small pieces please',
  'and one more thing',
];
const reply = (text: string) => `Echo: ${text}`;
const OTHER_DEVICE = 'from the other device';
const OTHER_TAB = 'from the other tab';
/** The agent writes start, start-step, text-start, then 8-character deltas: pause before the 4th. */
const MID_REPLY_CHUNK = 6;
const DELTAS_BEFORE_PAUSE = MID_REPLY_CHUNK - 3;
/** How long a "stored, no chunk yet" turn stays silent: a model's time to first token. */
const SILENT_MS = 1_500;
/** How long `turnLive` may stay true after a turn ended on screen (a stop being stored). */
const LIVE_AFTER_END_MS = 1_000;
/** How long a reader may outlive the last turn (a settled peek drains for about 1 s). */
const IDLE_OUT_MS = 1_500;

/** `MOMENTS_STRICT=1`: known-defect cells run as plain tests, to read why they fail. */
const STRICT = process.env.MOMENTS_STRICT === '1';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------
// Moments of a turn.

interface MomentState {
  pause?: AgentPause;
  answeredBefore?: number;
  oldestBefore?: number;
}

interface Moment {
  /** The action lands while the turn runs (else between its turn-complete and the next send). */
  duringTurn: boolean;
  /** The turn's reply has begun on screen at the moment. */
  replyStarted: boolean;
  /** The first turn (0-based) this moment exists in. */
  minTurn: number;
  /** Before the turn with the user message `text` is sent. */
  arm(world: World, text: string): MomentState;
  /** Resolves once the moment holds. */
  reach(world: World, state: MomentState): Promise<void>;
  /** Lets the turn go on once the action is done. */
  release(world: World, state: MomentState): Promise<void>;
}

const lastAssistantText = (world: World) => {
  const last = world.current.chat.messages.at(-1);
  if (last?.role !== 'assistant') return '';
  return last.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
};

const oldestOutSeq = (world: World) => world.server.inspect(world.chatId)?.out.oldestSeq ?? 0;

const MOMENTS = {
  'before the append is sent': {
    duringTurn: true,
    replyStarted: false,
    minTurn: 0,
    arm: (world, text) => {
      world.current.page.holdAppendRequest(text);
      return {};
    },
    reach: (world) => waitFor(() => world.current.page.holding === 1, BOUND_MS, 'the held append request'),
    release: async (world) => {
      // After the action's timers of this tick (a stop's abort is deferred one timer tick):
      // a request the page had not sent is aborted, never sent late.
      await sleep(20);
      for (const device of world.devices) device.page.release();
    },
  },
  'append in flight': {
    duringTurn: true,
    replyStarted: false,
    minTurn: 0,
    arm: (world, text) => {
      world.current.page.holdAppendResponse(text);
      return { pause: pauseTurn(world.chatId, text, 0) };
    },
    reach: (world, { pause }) =>
      waitFor(
        () => world.current.page.holding === 1 && pause?.reached === true,
        BOUND_MS,
        'the stored, unanswered append',
      ),
    release: async (world, { pause }) => {
      for (const device of world.devices) device.page.release();
      pause?.release();
    },
  },
  'append stored, no chunk yet': {
    duringTurn: true,
    replyStarted: false,
    minTurn: 0,
    arm: (world, text) => ({
      pause: pauseTurn(world.chatId, text, 0),
      answeredBefore: world.current.page.appendsAnswered,
    }),
    reach: (world, { pause, answeredBefore = 0 }) =>
      waitFor(
        () => pause?.reached === true && world.current.page.appendsAnswered > answeredBefore,
        BOUND_MS,
        'the answered append of a silent turn',
      ),
    release: async (_world, { pause }) => {
      await sleep(SILENT_MS);
      pause?.release();
    },
  },
  'mid-reply': {
    duringTurn: true,
    replyStarted: true,
    minTurn: 0,
    arm: (world, text) => ({ pause: pauseTurn(world.chatId, text, MID_REPLY_CHUNK) }),
    reach: (world, { pause }) =>
      waitFor(
        () => pause?.reached === true && lastAssistantText(world).length === DELTAS_BEFORE_PAUSE * 8,
        BOUND_MS,
        'the first deltas on screen',
      ),
    release: async (_world, { pause }) => {
      await sleep(50);
      pause?.release();
    },
  },
  'between turn-complete and trim': {
    duringTurn: false,
    replyStarted: true,
    minTurn: 0,
    arm: () => ({}),
    reach: async (world) => {
      await world.settle(world.current, 'the turn');
    },
    release: async () => {},
  },
  'idle (trimmed)': {
    duringTurn: false,
    replyStarted: true,
    // A turn trims back to the previous turn-complete: the first turn has none.
    minTurn: 1,
    arm: (world) => {
      world.server.faults.setTrimDelay(0);
      return { oldestBefore: oldestOutSeq(world) };
    },
    reach: async (world, { oldestBefore = 0 }) => {
      await world.settle(world.current, 'the turn');
      await waitFor(() => oldestOutSeq(world) > oldestBefore, BOUND_MS, 'the trim');
    },
    release: async () => {},
  },
} satisfies Record<string, Moment>;

type MomentName = keyof typeof MOMENTS;

// ---------------------------------------------------------------------------------------
// Actions.

/** What the user should see of the turn the action hit. */
type Outcome =
  /** The fault-free run's messages. */
  | 'same'
  /** The reply cut where it was stopped (or absent); every later turn whole. */
  | 'stopped'
  /** The message never left the page: no reply to it; every later turn whole. */
  | 'unsent'
  /**
   * The next turn was sent before this turn's reply began: the AI SDK's Chat shows the
   * second user message right after the first, then each reply whole, in sending order.
   */
  | 'overlapped';

/** Another page on the same chat, and what it should show at the end. */
interface Other {
  device: Device;
  expected: string[];
}

interface ActionContext {
  world: World;
  /** The turn (0-based) the action hit. */
  turn: number;
  /** Set by an action that sent the next turn itself. */
  sentNext: boolean;
  /** Other pages' chats (devices, tabs), each checked against the messages it should show. */
  others: Other[];
}

interface Action {
  /** Done at the moment (the turn may be held there). */
  apply(context: ActionContext): Promise<void>;
  outcome(moment: MomentName): Outcome;
  /** Needs a next turn to send (it sends it). */
  needsNextTurn?: boolean;
}

const ACTIONS = {
  /** A reload: a new page from the same persisted records, seeded with what the app saved. */
  reload: {
    apply: async ({ world }) => {
      const old = world.current;
      const saved = world.saved(old);
      await world.killPage(old);
      world.current = world.device(old.persistence, saved);
      world.resume();
    },
    // Even before its append left the page: the page saved the message, and the reloaded
    // page sends it again under its part id (stored once), so its reply comes.
    outcome: () => 'same',
  },
  /** An unmount (the transport stays), then a remount of a fresh Chat that resumes. */
  disconnect: {
    apply: async ({ world }) => {
      const saved = world.saved();
      world.current.transport.disconnect(world.chatId);
      await sleep(20);
      world.current.chat = world.chatFor(world.current, saved);
      world.resume();
    },
    outcome: () => 'same',
  },
  /** useChat's stop. */
  stop: {
    apply: async ({ world }) => {
      await world.current.chat.stop();
    },
    outcome: (moment) => (MOMENTS[moment].duringTurn ? 'stopped' : 'same'),
  },
  /** The next turn is sent at the moment (the AI SDK's Chat lets a send overlap a turn). */
  'second send': {
    needsNextTurn: true,
    apply: async (context) => {
      const { page } = context.world.current;
      const sent = page.appendsSent;
      context.world.send(TURNS[context.turn + 1] as string);
      context.sentNext = true;
      // Where this turn's own append is held unsent, give the second one the time to go out
      // first (a client that keeps appends in order holds it back: then this just waits).
      await waitFor(() => page.appendsSent > sent, 500).catch(() => {});
    },
    outcome: (moment) => (MOMENTS[moment].replyStarted ? 'same' : 'overlapped'),
  },
  /**
   * A steering message (`sendPendingMessage`): appended at the moment, the open stream left
   * alone. The echo agent does not inject pending messages, so it answers it as a turn of
   * its own, which no stream of this chat shows; the next send shows only its own reply.
   */
  'steering message': {
    apply: async ({ world }) => {
      // Not awaited: the turn's own append may be held at this moment.
      const device = world.current;
      const errors = device.errors;
      const message = { id: `steer-${Math.random().toString(36).slice(2)}`, role: 'user' as const };
      const steering = device.transport
        .sendPendingMessage(world.chatId, {
          ...message,
          parts: [{ type: 'text', text: 'also, keep it short' }],
        })
        .catch((error: unknown) => {
          errors.push(error);
        });
      device.pending.push(steering);
    },
    outcome: () => 'same',
  },
  /** Another device, with its own (empty) storage, sends into the same chat at the moment. */
  'second device': {
    apply: async ({ world, others }) => {
      const device = world.device(memoryPersistence());
      others.push({ device, expected: [`user: ${OTHER_DEVICE}`, `assistant: ${reply(OTHER_DEVICE)}`] });
      world.send(OTHER_DEVICE, device);
    },
    outcome: () => 'same',
  },
  /**
   * A second tab: a page sharing this one's storage (one localStorage per origin), opened on
   * the chat with the saved messages, sends at once (no resume).
   */
  'second tab': {
    apply: async ({ world, others }) => {
      const saved = world.saved();
      const device = world.device(world.current.persistence, saved);
      const expected = [...transcript(saved), `user: ${OTHER_TAB}`, `assistant: ${reply(OTHER_TAB)}`];
      others.push({ device, expected });
      world.send(OTHER_TAB, device);
    },
    outcome: () => 'same',
  },
  /**
   * useChat's unmount: `chat.stop()` and `disconnect` in the same tick (a leave, not a
   * stop), then a remount of a fresh Chat that resumes.
   */
  'unmount (stop + disconnect)': {
    apply: async ({ world }) => {
      const saved = world.saved();
      const stopping = world.current.chat.stop();
      world.current.transport.disconnect(world.chatId);
      await stopping;
      world.current.chat = world.chatFor(world.current, saved);
      world.resume();
    },
    outcome: () => 'same',
  },
  /** The user opens another chat on the same transport, gets a reply there, and comes back. */
  'switch chats': {
    apply: async ({ world }) => {
      const saved = world.saved();
      world.current.transport.disconnect(world.chatId);
      const otherChatId = `${world.chatId}-elsewhere`;
      const errors: unknown[] = [];
      const elsewhere = new TestChat({
        id: otherChatId,
        transport: world.current.transport,
        onError: (error) => errors.push(error),
      });
      await elsewhere.sendMessage({ text: 'meanwhile, elsewhere' });
      world.current.transport.disconnect(otherChatId);
      expect(errors).toEqual([]);
      expect(transcript(elsewhere.messages)).toEqual([
        'user: meanwhile, elsewhere',
        `assistant: ${reply('meanwhile, elsewhere')}`,
      ]);
      world.current.chat = world.chatFor(world.current, saved);
      world.resume();
    },
    outcome: () => 'same',
  },
  /** Every token expires (a tab idle past the token lifetime). */
  'token expiry': {
    apply: async ({ world }) => {
      world.server.faults.expireTokens();
    },
    outcome: () => 'same',
  },
  /** The network cuts the open `.out` connection (a no-op when none is open). */
  'dropped .out connection': {
    apply: async ({ world, turn }) => {
      world.log.push(`turn ${turn + 1}: dropped ${world.current.page.dropOut()} .out connection(s)`);
    },
    outcome: () => 'same',
  },
} satisfies Record<string, Action>;

type ActionName = keyof typeof ACTIONS;

// ---------------------------------------------------------------------------------------
// One conversation, with actions injected at moments of its turns.

interface Injection {
  action: ActionName;
  moment: MomentName;
}

const describeInjection = (turn: number, { action, moment }: Injection) =>
  `${action} @ ${moment} (turn ${turn + 1})`;

interface Run {
  transcript: string[];
  errors: unknown[];
  status: string;
  turnLive: boolean;
  liveAfterEnd: number[];
  /** `.out` connections still open `IDLE_OUT_MS` after the last turn (transports open). */
  openWhileIdle: number;
  open: number;
  log: string[];
  outcomes: (Outcome | undefined)[];
  others: { transcript: string[]; errors: unknown[]; expected: string[] }[];
}

/** The three turns, one call per turn; `finish` sends what is left and collects the run. */
class Conversation {
  readonly world: World;
  /** Turns sent so far (a second send sends the next one early). */
  private sent = 0;

  /** Turns sent so far (all of them ended once `turn` returned). */
  get sentTurns(): number {
    return this.sent;
  }
  /** Turns done (the next `turn` call plays turn `done`). */
  done = 0;
  readonly outcomes: (Outcome | undefined)[] = [];
  readonly others: Other[] = [];
  /** Turns after whose end the chat stayed "live" (`turnLive`) for `LIVE_AFTER_END_MS`. */
  readonly liveAfterEnd: number[] = [];

  constructor(server: DevServer) {
    this.world = new World(server, uniqueChatId('moments'));
  }

  /** Plays the next turn, with `injection` at its moment. */
  async turn(injection?: Injection): Promise<void> {
    const { world } = this;
    const index = this.done;
    const text = TURNS[index] as string;
    this.done++;
    if (index < this.sent) {
      await world.settle(world.current, `turn ${index + 1}`);
      return;
    }
    if (injection === undefined) {
      this.sent = index + 1;
      world.send(text);
      await world.settle(world.current, `turn ${index + 1}`);
      await this.notLive(index);
      return;
    }
    world.log.push(describeInjection(index, injection));
    const moment: Moment = MOMENTS[injection.moment];
    const action: Action = ACTIONS[injection.action];
    const context: ActionContext = { world, turn: index, sentNext: false, others: this.others };
    const state = moment.arm(world, text);
    this.sent = index + 1;
    world.send(text);
    await moment.reach(world, state);
    await action.apply(context);
    await moment.release(world, state);
    await world.settle(world.current, `turn ${index + 1}`);
    for (const other of this.others) await world.settle(other.device, 'the other page');
    if (context.sentNext) this.sent = index + 2;
    this.outcomes[index] = action.outcome(injection.moment);
    await this.notLive(index);
  }

  /** The chat must not stay "live" once the turn ended on screen (a stop is stored meanwhile). */
  private async notLive(index: number): Promise<void> {
    const { world } = this;
    const live = () => world.current.transport.getState(world.chatId).turnLive;
    await waitFor(() => !live(), LIVE_AFTER_END_MS).catch(() => {});
    if (live()) this.liveAfterEnd.push(index + 1);
  }

  async finish(): Promise<Run> {
    const { world } = this;
    try {
      while (this.done < TURNS.length) await this.turn();
      const openOut = () => world.devices.reduce((sum, device) => sum + device.page.openOutCount, 0);
      await waitFor(() => openOut() === 0, IDLE_OUT_MS).catch(() => {});
      const run: Run = {
        openWhileIdle: openOut(),
        transcript: world.transcript(),
        errors: world.current.errors,
        status: world.current.chat.status,
        turnLive: world.current.transport.getState(world.chatId).turnLive,
        liveAfterEnd: this.liveAfterEnd,
        open: 0,
        log: world.log,
        outcomes: this.outcomes,
        others: this.others.map(({ device, expected }) => ({
          transcript: world.transcript(device),
          errors: device.errors,
          expected,
        })),
      };
      run.open = await world.close();
      return run;
    } finally {
      await world.close();
    }
  }
}

/** The messages a run should end with: each turn's exchange, changed by its outcome. */
type Expected = string | { cutOf: string };

function expectedMessages(outcomes: readonly (Outcome | undefined)[], turns = TURNS.length): Expected[] {
  const expected: Expected[] = [];
  let userShown = false;
  TURNS.slice(0, turns).forEach((text, index) => {
    const user = `user: ${text}`;
    const assistant = `assistant: ${reply(text)}`;
    if (!userShown) expected.push(user);
    userShown = false;
    const outcome = outcomes[index] ?? 'same';
    if (outcome === 'stopped') expected.push({ cutOf: assistant });
    else if (outcome === 'overlapped') {
      expected.push(`user: ${TURNS[index + 1]}`, assistant);
      userShown = true;
    } else if (outcome !== 'unsent') expected.push(assistant);
  });
  return expected;
}

/** `expected` with each cut reply resolved against `actual` (a prefix of the reply, or absent). */
function resolveCuts(actual: readonly string[], expected: readonly Expected[]): string[] {
  const resolved: string[] = [];
  let at = 0;
  for (const entry of expected) {
    if (typeof entry === 'string') {
      resolved.push(entry);
      at++;
      continue;
    }
    const candidate = actual[at];
    const prefix = 'assistant: ';
    if (candidate?.startsWith(prefix) && entry.cutOf.startsWith(candidate)) {
      resolved.push(candidate);
      at++;
    }
  }
  return resolved;
}

function check(label: string, run: Run): void {
  const context = `${label}\n${run.log.join('\n')}`;
  if (process.env.MOMENTS_DEBUG) console.log(`${context}\n${run.transcript.join('\n')}\n`);
  expect(run.errors.map(String), context).toEqual([]);
  expect(run.transcript, context).toEqual(resolveCuts(run.transcript, expectedMessages(run.outcomes)));
  for (const other of run.others) {
    expect(other.errors.map(String), `${context}\n(the other page)`).toEqual([]);
    expect(other.transcript, `${context}\n(the other page)`).toEqual(other.expected);
  }
  expect(run.status, context).toBe('ready');
  expect(run.liveAfterEnd, `${context}\n(turns after which turnLive stayed true)`).toEqual([]);
  expect(run.turnLive, `${context}\n(turnLive at the end)`).toBe(false);
  expect(run.openWhileIdle, `${context}\n(.out connections open after the last turn)`).toBe(0);
  expect(run.open, `${context}\n(.out connections open after close)`).toBe(0);
}

// ---------------------------------------------------------------------------------------
// The cells.

interface Cell extends Injection {
  /** 0: the first send of a new chat; 1: a chat with a history. */
  turn: number;
  /** Fails on the current code: why, and the item of issue 18 it matches. Runs as `it.fails`. */
  knownDefect?: string;
}

type CellName = `${ActionName} @ ${MomentName} (turn ${1 | 2})`;

/**
 * Cells that fail on the current code (each failure message inspected once). Remove an
 * entry when its cell turns red: the defect is fixed.
 */
const KNOWN_DEFECTS: Partial<Record<CellName, string>> = {
  // 'second tab @ append stored, no chunk yet (turn 2)' was one: the trim written after turn 1
  // moved the shared record's cursor past the live turn's start cursor, so the second tab took
  // the silent turn 2 for begun and its `start` for its own reply's. A command record now moves
  // the start cursor with it (`TurnStream.passCommand`).
};

const CELLS: Cell[] = (Object.keys(ACTIONS) as ActionName[]).flatMap((action) =>
  [0, 1].flatMap((turn) =>
    (Object.keys(MOMENTS) as MomentName[])
      // Turn 1's own after-moments are turn 2's "before": the matrix places them after turn 2.
      .filter((moment) => (turn === 0 ? MOMENTS[moment].duringTurn : turn >= MOMENTS[moment].minTurn))
      .map((moment) => ({
        action,
        moment,
        turn,
        knownDefect: KNOWN_DEFECTS[describeInjection(turn, { action, moment }) as CellName],
      })),
  ),
);

let pool: ServerPool;
let baseline: Run;

beforeAll(async () => {
  pool = await ServerPool.start(4);
  baseline = await pool.lease((server) => new Conversation(server).finish());
  expect(baseline.transcript).toEqual(
    TURNS.flatMap((text) => [`user: ${text}`, `assistant: ${reply(text)}`]),
  );
  expect(baseline.errors).toEqual([]);
  expect(baseline.open).toBe(0);
});

afterAll(async () => {
  await pool?.close();
});

describe.concurrent('user actions × turn moments', () => {
  it('the fault-free run is what every cell compares with', () => {
    expect(expectedMessages([]).filter((entry) => typeof entry === 'string')).toEqual(baseline.transcript);
  });
  for (const cell of CELLS) {
    const plan: (Injection | undefined)[] = [];
    plan[cell.turn] = cell;
    const label = describeInjection(cell.turn, cell);
    const name = cell.knownDefect === undefined ? label : `${label}: known defect: ${cell.knownDefect}`;
    if (cell.knownDefect === undefined || STRICT) it(name, () => playAndCheck(label, plan), 30_000);
    else it.fails(name, () => playAndCheck(label, plan), 30_000);
  }
});

/**
 * Sequences of actions across turns that the random runs found failing although each of
 * their cells held alone: one line each, `knownDefect` as for cells. The resumed-turn ones
 * (another input's turn, or a stopped turn's end, after the start cursor) were fixed by
 * attributing a resumed turn by its own append's seq (`turnInSeq`); they stay as regressions.
 */
const SEQUENCES: { plan: (Injection | undefined)[]; knownDefect?: string }[] = [
  {
    plan: [
      undefined,
      { action: 'second device', moment: 'between turn-complete and trim' },
      { action: 'reload', moment: 'append in flight' },
    ],
  },
  {
    plan: [
      undefined,
      { action: 'second device', moment: 'mid-reply' },
      { action: 'reload', moment: 'mid-reply' },
    ],
  },
  {
    // The same transport, its append's seq known: the other device's turn is held and dropped.
    plan: [
      undefined,
      { action: 'second device', moment: 'between turn-complete and trim' },
      { action: 'disconnect', moment: 'mid-reply' },
    ],
  },
  {
    // The steering message's own turn (shown by no stream) lies before turn 2's start cursor.
    plan: [
      { action: 'steering message', moment: 'append in flight' },
      { action: 'unmount (stop + disconnect)', moment: 'mid-reply' },
    ],
  },
  {
    plan: [
      { action: 'token expiry', moment: 'between turn-complete and trim' },
      { action: 'stop', moment: 'before the append is sent' },
    ],
  },
  {
    plan: [
      { action: 'stop', moment: 'mid-reply' },
      { action: 'disconnect', moment: 'before the append is sent' },
    ],
  },
  {
    plan: [
      undefined,
      { action: 'stop', moment: 'mid-reply' },
      { action: 'switch chats', moment: 'append in flight' },
    ],
  },
  {
    // Holds: once this page read the other device's turn, its own next turns resume right.
    plan: [
      { action: 'second device', moment: 'mid-reply' },
      undefined,
      { action: 'reload', moment: 'mid-reply' },
    ],
  },
];

const describePlan = (plan: readonly (Injection | undefined)[]) =>
  plan
    .flatMap((injection, turn) => (injection === undefined ? [] : [describeInjection(turn, injection)]))
    .join(', then ');

async function playAndCheck(label: string, plan: readonly (Injection | undefined)[]): Promise<void> {
  const run = await pool.lease(async (server) => {
    const conversation = new Conversation(server);
    try {
      for (const injection of plan) await conversation.turn(injection);
      return await conversation.finish();
    } finally {
      await conversation.world.close();
    }
  });
  check(label, run);
}

describe.concurrent('sequences of user actions', () => {
  for (const { plan, knownDefect } of SEQUENCES) {
    const label = describePlan(plan);
    if (knownDefect === undefined || STRICT) it(label, () => playAndCheck(label, plan), 30_000);
    else it.fails(`${label}: known defect: ${knownDefect}`, () => playAndCheck(label, plan), 30_000);
  }
});

// ---------------------------------------------------------------------------------------
// Random sequences of the cells that hold.

const RANDOM_RUNS = Number(process.env.MOMENTS_RUNS ?? 6);
const SEED = Number(process.env.MOMENTS_SEED ?? 18);

/** (action, moment) pairs with no known defect in any turn. */
const HOLDING = (Object.keys(ACTIONS) as ActionName[]).flatMap((action) =>
  (Object.keys(MOMENTS) as MomentName[])
    .filter(
      (moment) => !CELLS.some((cell) => cell.action === action && cell.moment === moment && cell.knownDefect),
    )
    .map((moment): Injection => ({ action, moment })),
);

interface Model {
  /** Turns played. */
  turn: number;
  /** A second send already sent the next turn: nothing can be injected into it. */
  nextSent: boolean;
  /** What the previous turn had injected. */
  previous: Injection | undefined;
}

/** Known defects of sequences the random runs must step around (remove with the defect). */
function knownSequenceDefect({ previous }: Readonly<Model>, injection: Injection): boolean {
  if (previous === undefined) return false;
  // A stop while an append is refused for an expired token: item 15 (see SEQUENCES).
  return (
    previous.action === 'token expiry' &&
    !MOMENTS[previous.moment].duringTurn &&
    injection.action === 'stop' &&
    injection.moment === 'before the append is sent'
  );
}

class TurnCommand implements fc.AsyncCommand<Model, Conversation> {
  constructor(readonly injection: Injection | undefined) {}

  check(model: Readonly<Model>): boolean {
    if (model.turn >= TURNS.length) return false;
    const { injection } = this;
    if (injection === undefined) return true;
    if (model.nextSent) return false;
    if (model.turn < MOMENTS[injection.moment].minTurn) return false;
    if (knownSequenceDefect(model, injection)) return false;
    const action: Action = ACTIONS[injection.action];
    return action.needsNextTurn !== true || model.turn + 1 < TURNS.length;
  }

  async run(model: Model, conversation: Conversation): Promise<void> {
    await conversation.turn(this.injection);
    const action: Action | undefined = this.injection && ACTIONS[this.injection.action];
    model.nextSent = action?.needsNextTurn === true;
    model.previous = this.injection;
    model.turn++;
    expect(conversation.done).toBe(model.turn);
    // After every step, the chat shows what the steps so far should have left on screen.
    const { world } = conversation;
    const label = `MOMENTS_SEED=${SEED}, after ${this.toString()}\n${world.log.join('\n')}`;
    const shown = world.transcript();
    expect(world.current.errors.map(String), label).toEqual([]);
    expect(shown, label).toEqual(
      resolveCuts(shown, expectedMessages(conversation.outcomes, conversation.sentTurns)),
    );
  }

  toString(): string {
    return this.injection === undefined
      ? 'plain turn'
      : `${this.injection.action} @ ${this.injection.moment}`;
  }
}

describe('random sequences of user actions', () => {
  it(`${RANDOM_RUNS} seeded runs of three turns (MOMENTS_SEED=${SEED})`, async () => {
    const commands = fc.commands(
      [
        fc.constant(new TurnCommand(undefined)),
        ...Array.from({ length: 4 }, () =>
          fc.constantFrom(...HOLDING).map((injection) => new TurnCommand(injection)),
        ),
      ],
      { maxCommands: TURNS.length, size: 'max' },
    );
    await fc.assert(
      fc.asyncProperty(commands, async (sequence) => {
        const run = await pool.lease(async (server) => {
          const conversation = new Conversation(server);
          try {
            await fc.asyncModelRun(
              () => ({ model: { turn: 0, nextSent: false, previous: undefined }, real: conversation }),
              sequence,
            );
            return await conversation.finish();
          } finally {
            await conversation.world.close();
          }
        });
        if (process.env.MOMENTS_DEBUG)
          console.log(`sequence: ${sequence.toString()} -> ${run.log.join('; ')}`);
        check(`MOMENTS_SEED=${SEED}: ${sequence.toString()}`, run);
      }),
      { numRuns: RANDOM_RUNS, seed: SEED, endOnFailure: true },
    );
  }, 120_000);
});
