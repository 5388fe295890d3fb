// @vitest-environment happy-dom
// Issue 19's systemic part: the user-action × turn-moment matrix on both React paths
// (`useChat` + `useChatSession` + `useFollowTurns`, and `useDurableChat`), against the dev server
// over loopback with the library's default options (no shortened retry or timeouts).
//
// Tab A sends TEXT; at one moment of that turn the user acts (leaves and comes back, switches
// chats, reloads, StrictMode remounts, a second tab opens or sends). Each cell asserts: every tab
// ends with the fault-free run's transcript (the user message once, the reply once), the app
// saved the turn once (README's `onFinish` rule) for the right chat, the agent got the expected
// number of appends (no tool run twice), and no error but a documented one reached the app.
// A new action or moment is one entry in ACTIONS or MOMENTS.

import type { UIMessage } from 'ai';
import { type ReactNode, Suspense, startTransition } from 'react';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevServer } from '../../src/dev-server/index.js';
import { sharedStorage } from '../session/support/core-tabs.js';
import { MemoryLocks } from '../session/support/memory-locks.js';
import { startSessionVia, waitFor } from '../transport/support/dev-server-fixture.js';
import {
  type AgentPause,
  BOUND_MS,
  echoReply,
  MATRIX_OTHER_TEXT,
  MATRIX_TEXT,
  MID_REPLY_CHUNK,
  Page,
  pauseTurn,
  startMomentsServer,
} from '../transport/support/moments.js';
import { mountChat, nextChatId, nodeFetch } from './support/harness.js';
import { mountPlainChat } from './support/plain-harness.js';

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

const textsOf = (messages: readonly UIMessage[]) =>
  messages.map((message) => message.parts.map((part) => (part.type === 'text' ? part.text : '')).join(''));

// ---------------------------------------------------------------------------------------
// One browser: a shared storage (a JSON record per chat, as localStorage), a lock manager
// (tab coordination on only where a second tab is in the cell), what the app saved and heard.

interface Saved {
  tab: string;
  chat: string;
  texts: string[];
}

class Browser {
  readonly storage = sharedStorage();
  readonly locks = new MemoryLocks();
  /** Tab coordination as a browser without Web Locks has it: the BroadcastChannel lease. */
  lease = false;
  readonly saves: Saved[] = [];
  readonly errors: { tab: string; code: string }[] = [];
  readonly tabs: Tab[] = [];
  constructor(
    readonly chatId: string,
    readonly tabsOn: boolean,
    readonly strict: boolean,
  ) {}
}

interface MountInput {
  name: string;
  chatId: string;
  messages: UIMessage[];
  page: Page;
  strict: boolean;
  /** Set: the next render suspends until the gate opens (a navigation loading chat B). */
  suspender: Suspender;
}

/** One mounted chat component of a path, behind one interface. */
interface Tab {
  readonly name: string;
  readonly page: Page;
  readonly suspender: Suspender;
  chatId: string;
  transcript(): string[];
  messages(): UIMessage[];
  busy(): boolean;
  /** The session's status (`sessionStatus.type`, or `session.status.type` on the plain path). */
  sessionStatus(): string;
  send(text: string): void;
  /** The user's Stop button. */
  stop(): void;
  /** Re-renders on another chat (the app passes that chat's saved messages). */
  show(chatId: string, messages: UIMessage[]): void;
  unmount(): void;
  closed: boolean;
}

type Mount = (browser: Browser, input: MountInput) => Tab;

interface Gate {
  rendered: number;
  done: boolean;
  promise: Promise<void>;
  open(): void;
}

interface Suspender {
  gate?: Gate;
}

function suspenseGate(): Gate {
  let open = () => {};
  const gate: Gate = {
    rendered: 0,
    done: false,
    promise: new Promise<void>((resolve) => {
      open = resolve;
    }),
    open: () => {
      gate.done = true;
      open();
    },
  };
  return gate;
}

function Wait({ suspender }: { suspender: Suspender }) {
  const gate = suspender.gate;
  if (gate !== undefined && !gate.done) {
    gate.rendered += 1;
    throw gate.promise;
  }
  return null;
}

/** The chat inside a Suspense boundary, beside what a navigation may suspend on. */
const suspendable = (suspender: Suspender) => (node: ReactNode) => (
  <Suspense fallback={null}>
    {node}
    <Wait suspender={suspender} />
  </Suspense>
);

/** The hooks' `tabs` option: the library's defaults, with Web Locks or (`lease`) without. */
const tabsOf = (browser: Browser) =>
  browser.tabsOn ? { locks: browser.lease ? null : browser.locks } : (false as const);

const codeOf = (error: unknown) => (error as { code?: string }).code ?? String(error);

const mountPlain: Mount = (browser, { name, chatId, messages, page, strict, suspender }) => {
  const tab = { chatId } as { chatId: string };
  const sessionOf = (id: string) => ({
    chatId: id,
    baseURL: server.url,
    taskIdentifier: 'echo',
    startSession: startSessionVia(server),
    persistence: browser.storage.adapter,
    fetch: page.fetch,
    environment: { warn: () => {} },
    tabs: tabsOf(browser),
  });
  let mounted: ReturnType<typeof mountPlainChat> | undefined;
  const propsOf = (id: string, initial: UIMessage[]) => ({
    session: sessionOf(id),
    chat: {
      resume: true,
      messages: structuredClone(initial),
      onError: (error: Error) => browser.errors.push({ tab: name, code: codeOf(error) }),
      onFinish: ({
        messages: finished,
        isAbort,
        isError,
      }: {
        messages: UIMessage[];
        isAbort: boolean;
        isError: boolean;
      }) => {
        // docs/react.md's rule for the plain path.
        if (isAbort || isError || mounted?.session.isFollowingTurn()) return;
        browser.saves.push({ tab: name, chat: id, texts: textsOf(finished) });
      },
    },
  });
  mounted = mountPlainChat(propsOf(chatId, messages), { strict, wrap: suspendable(suspender) });
  const chat = mounted;
  return {
    name,
    page,
    suspender,
    get chatId() {
      return tab.chatId;
    },
    transcript: () => chat.transcript(),
    messages: () => chat.chat.messages as UIMessage[],
    busy: () => chat.chat.status === 'submitted' || chat.chat.status === 'streaming',
    sessionStatus: () => chat.session.status.type,
    send: (text) => {
      void chat.chat.sendMessage({ text }).catch(() => {});
    },
    stop: () => void chat.chat.stop(),
    show: (id, initial) => {
      tab.chatId = id;
      chat.update(propsOf(id, initial));
    },
    unmount() {
      this.closed = true;
      chat.unmount();
    },
    closed: false,
  };
};

const mountDurable: Mount = (browser, { name, chatId, messages, page, strict, suspender }) => {
  const tab = { chatId } as { chatId: string };
  const optionsOf = (id: string, initial: UIMessage[]) => ({
    chatId: id,
    baseURL: server.url,
    taskIdentifier: 'echo',
    startSession: startSessionVia(server),
    persistence: browser.storage.adapter,
    fetch: page.fetch,
    environment: { warn: () => {} },
    tabs: tabsOf(browser),
    messages: structuredClone(initial),
    onError: (error: Error) => browser.errors.push({ tab: name, code: codeOf(error) }),
    onFinish: ({
      messages: finished,
      isAbort,
      isError,
    }: {
      messages: UIMessage[];
      isAbort: boolean;
      isError: boolean;
    }) => {
      if (isAbort || isError) return;
      browser.saves.push({ tab: name, chat: id, texts: textsOf(finished) });
    },
  });
  const chat = mountChat(optionsOf(chatId, messages), { strict, wrap: suspendable(suspender) });
  return {
    name,
    page,
    suspender,
    get chatId() {
      return tab.chatId;
    },
    transcript: () => chat.transcript(),
    messages: () => chat.current.messages as UIMessage[],
    busy: () => chat.current.status === 'submitted' || chat.current.status === 'streaming',
    sessionStatus: () => chat.current.sessionStatus.type,
    send: (text) => {
      void chat.run((current) => current.sendMessage({ text })).catch(() => {});
    },
    stop: () => void chat.run((current) => current.stop()),
    show: (id, initial) => {
      tab.chatId = id;
      chat.update(optionsOf(id, initial));
    },
    unmount() {
      this.closed = true;
      chat.unmount();
    },
    closed: false,
  };
};

/** What an app that saves its transcript kept of a tab: every message but a reply still streaming. */
function savedOf(tab: Tab): UIMessage[] {
  const messages = tab.messages();
  const last = messages.at(-1);
  if (last?.role === 'assistant' && tab.busy()) return structuredClone(messages.slice(0, -1));
  return structuredClone(messages);
}

// ---------------------------------------------------------------------------------------
// Moments of tab A's turn.

interface MomentState {
  pause?: AgentPause;
  answeredBefore?: number;
  /** The moment reloaded A: the new page's tab, which the action acts on as A. */
  reloaded?: Tab;
}

type Open = (name: string, messages: UIMessage[], options?: OpenOptions) => Tab;

interface OpenOptions {
  chatId?: string;
  strict?: boolean;
  /** The tab's network (default: a new page). */
  page?: Page;
}

interface Moment {
  /** The action lands while A's turn runs (else after its turn-complete). */
  duringTurn: boolean;
  /**
   * A has not announced its turn yet: it does so while a second tab's send waits for the lock,
   * which refuses that send (two tabs sent at the same moment: tab-races.test.tsx, item 4).
   */
  announcesLater?: boolean;
  /** The reply's first chunk has reached the owner. */
  replyStarted?: boolean;
  /**
   * A's page went away mid-turn: a second tab open from the start has taken the turn over
   * (docs/react.md, Tabs), so a send there is that turn's owner's, not refused.
   */
  secondTabTakesOver?: boolean;
  arm(owner: Tab): MomentState;
  /** A tab open from the start shows the moment too. */
  caughtUp(tab: Tab): boolean;
  /** Resolves at the moment; a moment that reloads A opens the new page with `open` (`state.reloaded`). */
  reach(owner: Tab, state: MomentState, open: Open): Promise<void>;
  release(browser: Browser, state: MomentState): Promise<void>;
}

const lastText = (tab: Tab) => {
  const last = tab.messages().at(-1);
  return last?.role === 'assistant' ? (textsOf([last])[0] ?? '') : '';
};

const releasePages = (browser: Browser) => {
  for (const tab of browser.tabs) tab.page.release();
};

const midReply = (owner: Tab, pause: AgentPause | undefined) =>
  waitFor(() => pause?.reached === true && lastText(owner).length > 0, BOUND_MS, 'the first deltas');

const turnOver = (owner: Tab) =>
  waitFor(() => !owner.busy() && owner.transcript().at(-1) === reply(TEXT), BOUND_MS, 'the turn to end');

const RELOADED = 'reloaded mid-reply, its read not answered yet';

const MOMENTS: Record<string, Moment> = {
  'before the append is sent': {
    duringTurn: true,
    announcesLater: true,
    arm: (owner) => {
      owner.page.holdAppendRequest(TEXT);
      return {};
    },
    caughtUp: () => true,
    reach: (owner) => waitFor(() => owner.page.holding === 1, BOUND_MS, 'the held append request'),
    release: async (browser) => {
      await sleep(20);
      releasePages(browser);
    },
  },
  'append in flight': {
    duringTurn: true,
    arm: (owner) => {
      owner.page.holdAppendResponse(TEXT);
      return { pause: pauseTurn(owner.chatId, TEXT, 0) };
    },
    // The second tab shows the message once it has heard of the turn: a Stop pressed before
    // that has no turn to stop (and under load that news may come after the moment is reached).
    caughtUp: (tab) => tab.transcript()[0] === `user: ${TEXT}`,
    reach: (owner, { pause }) =>
      waitFor(
        () => owner.page.holding === 1 && pause?.reached === true,
        BOUND_MS,
        'the stored, unanswered append',
      ),
    release: async (browser, { pause }) => {
      releasePages(browser);
      pause?.release();
    },
  },
  'stored, no chunk yet': {
    duringTurn: true,
    arm: (owner) => ({ pause: pauseTurn(owner.chatId, TEXT, 0), answeredBefore: owner.page.appendsAnswered }),
    caughtUp: (tab) => tab.transcript()[0] === `user: ${TEXT}`,
    reach: (owner, { pause, answeredBefore = 0 }) =>
      waitFor(
        () => pause?.reached === true && owner.page.appendsAnswered > answeredBefore,
        BOUND_MS,
        'the answered append of a silent turn',
      ),
    release: async (_browser, { pause }) => {
      await sleep(100);
      pause?.release();
    },
  },
  'mid-reply': {
    duringTurn: true,
    replyStarted: true,
    arm: (owner) => ({ pause: pauseTurn(owner.chatId, TEXT, MID_REPLY_CHUNK) }),
    caughtUp: (tab) => lastText(tab).length > 0,
    reach: (owner, { pause }) => midReply(owner, pause),
    release: async (_browser, { pause }) => {
      await sleep(50);
      pause?.release();
    },
  },
  // A reloads mid-reply (the app mounts the new page with its saved messages) and the new page's
  // resume has no answer yet (a slow or half-open connection; the connect timeout is 20 s): its
  // first `.out` read is held unsent. The action acts on the reloaded tab as A, which shows the
  // message and no reply yet (`useChat` says `ready` meanwhile; the session says `resuming`).
  [RELOADED]: {
    duringTurn: true,
    secondTabTakesOver: true,
    arm: (owner) => ({ pause: pauseTurn(owner.chatId, TEXT, MID_REPLY_CHUNK) }),
    caughtUp: (tab) => lastText(tab).length > 0,
    reach: async (owner, state, open) => {
      await midReply(owner, state.pause);
      const saved = savedOf(owner);
      owner.unmount();
      owner.page.kill();
      const page = new Page(nodeFetch);
      page.holdOutRequest();
      const reloaded = open("a'", saved, { page });
      state.reloaded = reloaded;
      await waitFor(
        () => page.holding === 1 && reloaded.sessionStatus() === 'resuming',
        BOUND_MS,
        () => `the reloaded page's unanswered read (status ${reloaded.sessionStatus()})`,
      );
    },
    release: async (browser, { pause }) => {
      await sleep(50);
      releasePages(browser);
      await sleep(50);
      pause?.release();
    },
  },
  // The dev server trims 60 s after the turn-complete here: a wide moment.
  'between turn-complete and trim': {
    duringTurn: false,
    arm: () => ({}),
    caughtUp: (tab) => !tab.busy() && tab.transcript().at(-1) === reply(TEXT),
    reach: turnOver,
    release: async () => {},
  },
  idle: {
    duringTurn: false,
    arm: () => {
      server.faults.setTrimDelay(0);
      return {};
    },
    caughtUp: (tab) => !tab.busy() && tab.transcript().at(-1) === reply(TEXT),
    reach: async (owner) => {
      await turnOver(owner);
      await sleep(100); // trimmed meanwhile
    },
    release: async () => {},
  },
};

// ---------------------------------------------------------------------------------------
// Actions.

interface Cell {
  /** The tabs open after the action. */
  tabs: Tab[];
  /** The transcript every tab ends with; `as shown by a`: tab A's, once every tab is idle (a stop). */
  expected: string[] | 'as shown by a';
  appends: number;
  /** Saves (README's onFinish rule), each with the chat's texts then; `as shown by a`: A's, once. */
  saves: { chat: string; texts: string[] }[] | 'as shown by a';
  /** Errors the app may hear (documented), by tab. */
  errors: { tab: string; code: string }[];
}

interface ActionContext {
  browser: Browser;
  mount: Mount;
  a: Tab;
  b: Tab | undefined;
  moment: Moment;
  open: Open;
}

interface Action {
  /** Tab coordination on (a second tab in the cell). */
  tabs: boolean;
  /** Without Web Locks: the BroadcastChannel lease, default heartbeat (the cells of tab actions, again). */
  lease?: boolean;
  /** A second tab open from the start. */
  opensSecondTab: boolean;
  strict?: boolean;
  /** False at a moment the user cannot act at (the tab shows nothing to act on): no cell. */
  appliesAt?(moment: Moment): boolean;
  apply(context: ActionContext): Promise<Cell>;
}

const oneTurn = (chat: string, tabs: Tab[]): Cell => ({
  tabs,
  expected: [`user: ${TEXT}`, reply(TEXT)],
  appends: 1,
  saves: [{ chat, texts: [TEXT, `Echo: ${TEXT}`] }],
  errors: [],
});

const ACTIONS: Record<string, Action> = {
  'unmount and mount again': {
    tabs: false,
    opensSecondTab: false,
    apply: async ({ a, open }) => {
      const saved = savedOf(a);
      a.unmount();
      await sleep(30);
      return oneTurn(a.chatId, [open('a again', saved, { chatId: a.chatId })]);
    },
  },
  'switch to chat B and back': {
    tabs: false,
    opensSecondTab: false,
    apply: async ({ a, browser }) => {
      const chatA = a.chatId;
      const saved = savedOf(a);
      a.show(`${chatA}-b`, []);
      await sleep(30);
      a.show(chatA, saved);
      return oneTurn(browser.chatId, [a]);
    },
  },
  // A Next.js navigation: chat B's render suspends (its history loads) while A stays on screen.
  'switch to chat B in a suspended transition and back': {
    tabs: false,
    opensSecondTab: false,
    apply: async ({ a, browser }) => {
      const chatA = a.chatId;
      const saved = savedOf(a);
      const gate = suspenseGate();
      a.suspender.gate = gate;
      startTransition(() => a.show(`${chatA}-b`, []));
      await waitFor(() => gate.rendered > 0, BOUND_MS, 'the suspended render of chat B');
      await sleep(30);
      gate.open();
      await sleep(30);
      a.show(chatA, saved);
      return oneTurn(browser.chatId, [a]);
    },
  },
  reload: {
    tabs: false,
    opensSecondTab: false,
    apply: async ({ a, open }) => {
      const saved = savedOf(a);
      a.unmount();
      a.page.kill();
      return oneTurn(a.chatId, [open("a'", saved)]);
    },
  },
  'StrictMode remount': {
    tabs: false,
    opensSecondTab: false,
    strict: true,
    apply: async ({ a, open }) => {
      const saved = savedOf(a);
      a.unmount();
      return oneTurn(a.chatId, [open('a strict', saved, { strict: true })]);
    },
  },
  'a second tab opens': {
    tabs: true,
    opensSecondTab: false,
    apply: async ({ a, open }) => oneTurn(a.chatId, [a, open('b', savedOf(a))]),
  },
  // The send waits up to the tab life's grace (500 ms) for the owner to let go; held past it, it
  // is refused (documented: TURN_IN_OTHER_TAB) and the second tab shows A's turn only.
  'the second tab sends, refused': {
    tabs: true,
    opensSecondTab: true,
    apply: async ({ a, b, moment, browser }) => {
      const second = await sendFromSecondTab(b, moment);
      if (!moment.duringTurn || moment.secondTabTakesOver === true) return bothTurns(a, second);
      await waitFor(() => browser.errors.length > 0, BOUND_MS, 'the refusal');
      return { ...oneTurn(a.chatId, [a, second]), errors: [{ tab: 'b', code: 'TURN_IN_OTHER_TAB' }] };
    },
  },
  // The turn ends within the grace: the second tab's message is sent after it. Unless the owner
  // announces its turn only after the second tab sent: that is two tabs sending at the same
  // moment, and the later one is refused (documented in docs/react.md, Tabs).
  'the second tab sends, the turn ends meanwhile': {
    tabs: true,
    opensSecondTab: true,
    apply: async ({ a, b, moment, browser }) => {
      const second = await sendFromSecondTab(b, moment);
      if (moment.announcesLater !== true) return bothTurns(a, second);
      await waitFor(() => browser.errors.length > 0, BOUND_MS, 'the refusal');
      return { ...oneTurn(a.chatId, [a, second]), errors: [{ tab: 'b', code: 'TURN_IN_OTHER_TAB' }] };
    },
  },
  // The user sends the next message at the moment, in the tab whose turn runs (the AI SDK's Chat
  // lets a send overlap a turn): alone, and with a second tab following.
  'the owner sends again': {
    tabs: true,
    opensSecondTab: false,
    apply: async ({ a, moment }) => sendsAgain(a, [a], moment),
  },
  'the owner sends again, a second tab follows': {
    tabs: true,
    opensSecondTab: true,
    // After a reload the second tab takes the turn over and holds the lock to its end: A's send
    // waits for it and goes out after it. useDurableChat then shows, and saves, the server's
    // order; useChat keeps each message where it was sent (docs/react.md, Tabs).
    apply: async ({ a, b, moment, mount }) =>
      sendsAgain(a, [a, b as Tab], moment, mount === mountDurable && moment.secondTabTakesOver === true),
  },
  // The user stops A's turn in the tab that drives it, or in the second tab that follows it (the
  // README: stop works from a following tab too). Every tab ends with the reply as the owner
  // ended it (it tells the other tabs), which is the stopped reply's start, or the whole reply
  // when the stop came after it. A stopped reply is not saved (README's onFinish rule).
  'the owner stops': {
    tabs: true,
    opensSecondTab: true,
    apply: async ({ a, b, moment }) => {
      a.stop();
      return stopped(a, b as Tab, 'a', moment);
    },
  },
  'the second tab stops': {
    tabs: true,
    opensSecondTab: true,
    // Before A announces its turn the second tab shows no turn, so no Stop button to press.
    appliesAt: (moment) => moment.announcesLater !== true,
    apply: async ({ a, b, moment }) => {
      const second = b as Tab;
      await waitFor(() => moment.caughtUp(second), BOUND_MS, 'the second tab to show the moment');
      second.stop();
      return stopped(a, second, 'b', moment);
    },
  },
};

/**
 * After a stop nothing live was left to stop (the turn was over, or the second tab had not heard
 * of it yet: one turn as without the stop); otherwise the agent got the message and the stop,
 * and the reply is what A shows. A stopped reply is not saved (`isAbort`) in the tab that
 * stopped; A, when the second tab stopped, saves the turn as it ended there.
 */
function stopped(a: Tab, second: Tab, stopper: 'a' | 'b', moment: Moment): Cell {
  if (!moment.duringTurn) return oneTurn(a.chatId, [a, second]);
  return {
    tabs: [a, second],
    expected: 'as shown by a',
    appends: 2,
    saves: stopper === 'a' ? [] : 'as shown by a',
    errors: [],
  };
}

/**
 * A second message sent during A's turn: before the reply starts, the AI SDK shows the two
 * messages together, then each reply in sending order; after, the second turn follows the first.
 * Each request's onFinish saves the messages at its end: the first's holds the second message
 * (sent meanwhile) but not its reply.
 */
function sendsAgain(a: Tab, tabs: Tab[], moment: Moment, sentAfterTurn = false): Cell {
  a.send(OTHER);
  if (!moment.duringTurn) return bothTurns(a, a, tabs);
  const [asked, answered] = [`user: ${OTHER}`, reply(OTHER)];
  const expected =
    moment.replyStarted || sentAfterTurn
      ? [`user: ${TEXT}`, reply(TEXT), asked, answered]
      : [`user: ${TEXT}`, asked, reply(TEXT), answered];
  const texts = expected.map((line) => line.replace(/^(user|assistant): /, ''));
  return {
    tabs,
    expected,
    appends: 2,
    saves: [texts.slice(0, 3), texts].map((saved) => ({ chat: a.chatId, texts: saved })),
    errors: [],
  };
}

// Every tab action again as a browser without Web Locks runs it (the lease over the global
// BroadcastChannel, default heartbeat): ownership is then a claim and heartbeats, not a lock.
for (const [name, action] of Object.entries(ACTIONS)) {
  if (action.tabs) ACTIONS[`${name}, BroadcastChannel lease`] = { ...action, lease: true };
}

async function sendFromSecondTab(b: Tab | undefined, moment: Moment): Promise<Tab> {
  const second = b as Tab;
  await waitFor(() => moment.caughtUp(second), BOUND_MS, 'the second tab to show the moment');
  second.send(OTHER);
  return second;
}

function bothTurns(a: Tab, second: Tab, tabs: Tab[] = [a, second]): Cell {
  return {
    tabs,
    expected: [`user: ${TEXT}`, reply(TEXT), `user: ${OTHER}`, reply(OTHER)],
    appends: 2,
    saves: [
      { chat: a.chatId, texts: [TEXT, `Echo: ${TEXT}`] },
      { chat: a.chatId, texts: [TEXT, `Echo: ${TEXT}`, OTHER, `Echo: ${OTHER}`] },
    ],
    errors: [],
  };
}

const PATHS: Record<string, Mount> = {
  'useChat + useChatSession': mountPlain,
  useDurableChat: mountDurable,
};

/**
 * Cells that fail: the defect each shows, skipped (with the reason in the title) until fixed.
 * Key: `${path}: ${action} at "${moment}"`. None now. The last ones were "the owner sends again"
 * at "reloaded mid-reply, its read not answered yet": the send's reply reached the AI SDK while the
 * resumed one still streamed, so the resume's request ended only after it and both saves held the
 * whole transcript (`TurnStream.showAfter` holds a send's reply behind a resumed one now), and
 * useDurableChat moved a message sent during the live turn after its reply (`GuardedTransport`
 * notes the overlap) or saved before it moved one that waited (`DurableChatController`'s onFinish).
 */
const KNOWN_DEFECTS: Record<string, string> = {};

describe.each(Object.entries(PATHS))('%s', (_path, mount) => {
  const path = _path;
  for (const [momentName, moment] of Object.entries(MOMENTS)) {
    for (const [actionName, action] of Object.entries(ACTIONS)) {
      if (action.appliesAt?.(moment) === false) continue;
      const name = `${actionName} at "${momentName}"`;
      const defect = KNOWN_DEFECTS[`${path}: ${name}`];
      // KNOWN_DEFECTS=1 runs the known-defect cells too (to check they still fail, or pass after a fix).
      const run = defect === undefined || process.env.KNOWN_DEFECTS === '1' ? it : it.skip;
      run(defect === undefined ? name : `${name} (known defect: ${defect})`, async () => {
        const chatId = nextChatId('moments');
        const browser = new Browser(chatId, action.tabs, action.strict ?? false);
        browser.lease = action.lease === true;
        const open: Open = (tabName, messages, options = {}) => {
          const tab = mount(browser, {
            name: tabName,
            chatId: options.chatId ?? chatId,
            messages,
            page: options.page ?? new Page(nodeFetch),
            suspender: {},
            strict: options.strict ?? browser.strict,
          });
          browser.tabs.push(tab);
          return tab;
        };
        try {
          const first = open('a', []);
          const b = action.opensSecondTab ? open('b', []) : undefined;
          await sleep(30); // mounted; the resume on mount settled
          const state = moment.arm(first);
          first.send(TEXT);
          await moment.reach(first, state, open);
          const a = state.reloaded ?? first;
          const cell = await action.apply({ browser, mount, a, b, moment, open });
          await moment.release(browser, state);

          const describeTabs = () =>
            JSON.stringify({
              in: server.inspect(chatId)?.in,
              tabs: cell.tabs.map((tab) => ({
                tab: tab.name,
                busy: tab.busy(),
                transcript: tab.transcript(),
              })),
              saves: browser.saves,
              errors: browser.errors,
            });
          const expectedNow = () => (cell.expected === 'as shown by a' ? a.transcript() : cell.expected);
          await waitFor(
            () =>
              (server.inspect(chatId)?.in.nextSeq ?? 0) === cell.appends &&
              cell.tabs.every(
                (tab) => !tab.busy() && JSON.stringify(tab.transcript()) === JSON.stringify(expectedNow()),
              ),
            BOUND_MS,
            'every tab to show the turn',
          ).catch((error: unknown) => {
            throw new Error(`${String(error)}: ${describeTabs()}`);
          });
          const savesDue = cell.saves === 'as shown by a' ? 1 : cell.saves.length;
          await waitFor(() => browser.saves.length >= savesDue, 2_000, 'the saves').catch(() => {});
          // Late work (a takeover, a stray resume or save) would show within this.
          await sleep(200);
          for (const tab of cell.tabs)
            expect({ tab: tab.name, transcript: tab.transcript() }).toEqual({
              tab: tab.name,
              transcript: expectedNow(),
            });
          expect(server.inspect(chatId)?.in.nextSeq ?? 0).toBe(cell.appends);
          const saves =
            cell.saves === 'as shown by a' ? [{ chat: a.chatId, texts: textsOf(a.messages()) }] : cell.saves;
          expect(
            browser.saves.map(({ chat, texts }) => ({ chat, texts })),
            describeTabs(),
          ).toEqual(saves);
          if (cell.expected === 'as shown by a') {
            // A stopped reply: the message once, then what the agent wrote before the stop (if anything).
            const [asked, answer, ...more] = a.transcript();
            expect({ asked, more }).toEqual({ asked: `user: ${TEXT}`, more: [] });
            if (answer !== undefined) expect(reply(TEXT).startsWith(answer)).toBe(true);
          }
          expect(browser.errors).toEqual(cell.errors);
        } finally {
          for (const tab of browser.tabs) if (!tab.closed) tab.unmount();
          server.faults.reset();
          server.faults.setTrimDelay(60_000);
        }
      });
    }
  }
});
