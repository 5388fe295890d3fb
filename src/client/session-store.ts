import { createStore, type StoreApi } from 'zustand/vanilla';
import type { DurableChatError } from '../errors/durable-chat-error.js';
import { type LiveMark, type LiveMarkKey, liveMark, NO_LIVE_MARK, type TurnRecord } from './turn-records.js';

export { MAX_QUEUED_TURNS } from './turn-records.js';

/** The `.out` connection, as data (render it, log it, test it). */
export type ConnectionStatus =
  | { type: 'idle' }
  | { type: 'connecting' }
  | { type: 'streaming' }
  /**
   * A live turn's agent has sent nothing for `silentForMs` (since `silentSince`, epoch ms);
   * the connection is fine. Updated about once a second while it lasts.
   */
  | { type: 'waiting'; silentSince: number; silentForMs: number }
  /** Waiting to reconnect: `attempt` counts from 1; `nextRetryAt` is epoch ms. */
  | { type: 'reconnecting'; attempt: number; nextRetryAt: number }
  | { type: 'closed' }
  | { type: 'error'; error: DurableChatError };

/** Per-chat state. Tokens live here; never log the whole state. */
export interface ChatSessionState extends Readonly<LiveMark> {
  chatId: string;
  /** Friendly `session_*` id when the app's `startSession` returned one. */
  sessionId: string | undefined;
  /** The session's public access token (a JWT). */
  token: string | undefined;
  /** Token expiry, epoch ms, read from its `exp` claim (never verified). */
  tokenExpiresAt: number | undefined;
  /** Last `seq_num` processed on `.out`, command and malformed records included. */
  lastEventId: number | undefined;
  /**
   * The chat's turns (sends, actions, queued actions, a turn found live), the live one and the
   * few before it: the one source of the live mark below, and what persists of it. Written by
   * the turn ledger's transitions (`TurnRecord`).
   */
  turns: readonly TurnRecord[];
  /**
   * The user message the live turn answers (its UI message as JSON), when the page that sent it
   * noted it: a page that shows the turn again (coming back, a reload, another tab) brings the
   * message back with the reply. Persisted only while the turn is live.
   */
  turnMessage: string | undefined;
  status: ConnectionStatus;
  /** Live run id from the latest token's `read:runs:` scope. */
  runId: string | undefined;
  lastError: DurableChatError | undefined;
  /** Terminal: the session was closed (409). Reads stop, sends are refused locally. */
  closed: boolean;
  closedReason: string | null;
  /** True once the persisted record (if any) has been loaded. */
  hydrated: boolean;
}

export type SessionStore = StoreApi<ChatSessionState>;

/** The chat knows its session (an id, or a token for it): before that, nothing of it went out. */
export function knowsSession(state: Pick<ChatSessionState, 'sessionId' | 'token'>): boolean {
  return state.sessionId !== undefined || state.token !== undefined;
}

export function initialSessionState(chatId: string): ChatSessionState {
  return {
    chatId,
    sessionId: undefined,
    token: undefined,
    tokenExpiresAt: undefined,
    lastEventId: undefined,
    ...NO_LIVE_MARK,
    turns: [],
    turnMessage: undefined,
    status: { type: 'idle' },
    runId: undefined,
    lastError: undefined,
    closed: false,
    closedReason: null,
    hydrated: false,
  };
}

const LIVE_MARK_KEYS = Object.keys(NO_LIVE_MARK) as LiveMarkKey[];

/** The state with its fields writable, for building the next one in place. */
type MutableState = { -readonly [K in keyof ChatSessionState]: ChatSessionState[K] };
type StateConstructor = new (state: ChatSessionState) => MutableState;

/**
 * A copy of the state, built by a constructor: the same hidden class every time, every field
 * in the object itself, and `Object.prototype` as a literal's. Not a spread (`{ ...state,
 * ...patch }`): once its site has seen a dozen shapes of patch, V8 copies field by field onto
 * an empty object, growing an out-of-object property array (about 0.73 KiB a write against
 * 0.17, `npm run bench:alloc`). Not an object literal either: V8 tracks a literal's allocation
 * site, and with a thousand chats each keeping its latest state across scavenges it moves that
 * site's allocations to the old generation, where every superseded state (one per network read
 * of every chat: the `.out` reader's cursor write) waits for a full collection: 128 against
 * 107 KiB of RSS per chat at 1,000 chats (`npm run bench -- --only=scale`). A constructor's
 * objects are not pretenured. The session store test checks that the copy keeps every field.
 */
// Named for what a console shows of a state (`SessionState {chatId: …}`).
const StateCopy = function SessionState(this: MutableState, state: ChatSessionState) {
  this.chatId = state.chatId;
  this.sessionId = state.sessionId;
  this.token = state.token;
  this.tokenExpiresAt = state.tokenExpiresAt;
  this.lastEventId = state.lastEventId;
  this.turnLive = state.turnLive;
  this.turnStored = state.turnStored;
  this.stoppedTurn = state.stoppedTurn;
  this.pendingAppend = state.pendingAppend;
  this.turnStartCursor = state.turnStartCursor;
  this.turnInSeq = state.turnInSeq;
  this.turnPriorInSeq = state.turnPriorInSeq;
  this.queuedTurns = state.queuedTurns;
  this.turns = state.turns;
  this.turnMessage = state.turnMessage;
  this.status = state.status;
  this.runId = state.runId;
  this.lastError = state.lastError;
  this.closed = state.closed;
  this.closedReason = state.closedReason;
  this.hydrated = state.hydrated;
} as unknown as StateConstructor;
StateCopy.prototype = Object.prototype;

function applyMark(next: MutableState, mark: LiveMark): void {
  next.turnLive = mark.turnLive;
  next.turnStored = mark.turnStored;
  next.stoppedTurn = mark.stoppedTurn;
  next.pendingAppend = mark.pendingAppend;
  next.turnStartCursor = mark.turnStartCursor;
  next.turnInSeq = mark.turnInSeq;
  next.turnPriorInSeq = mark.turnPriorInSeq;
  next.queuedTurns = mark.queuedTurns;
}

/**
 * A zustand vanilla store for one chat. React binds to it with `useStore`; nothing else here.
 * The live mark (`turnLive` and the fields beside it) is read from `turns` on every write
 * that changes them, and a write of the mark itself is ignored: it is never set by hand.
 */
export function createSessionStore(chatId: string): SessionStore {
  const store = createStore<ChatSessionState>()(() => initialSessionState(chatId));
  const set = store.setState;
  const get = store.getState;
  // Set by a write that replaces the state or brings a field `ChatSessionState` does not
  // have: the state may then hold fields `copyState` would drop, so writes spread it instead.
  let irregular = false;
  // The next state is built here and handed over whole: an updater closure would be one more
  // allocation a write, and the `.out` reader writes once per network read of every chat.
  store.setState = ((partial: unknown, replace?: boolean) => {
    const state = get();
    const patch = (
      typeof partial === 'function' ? (partial as (s: ChatSessionState) => unknown)(state) : partial
    ) as Partial<ChatSessionState>;
    const base = replace === true ? undefined : state;
    // A write of `turns` (or of the mark by hand) gets the mark read from the turns.
    const mark =
      patch.turns !== undefined || writesMark(patch) ? liveMark(patch.turns ?? base?.turns ?? []) : undefined;
    if (base !== undefined && !irregular) {
      const next = new StateCopy(base);
      const fields = next as unknown as Record<string, unknown>;
      const values = patch as Record<string, unknown>;
      let known = true;
      for (const key in values) {
        if (!Object.hasOwn(values, key)) continue;
        // Own fields only: `in` would take `__proto__` for one and set the prototype.
        if (!Object.hasOwn(fields, key)) {
          known = false;
          break;
        }
        fields[key] = values[key];
      }
      if (known) {
        if (mark !== undefined) applyMark(next, mark);
        set(next, true);
        return;
      }
    }
    irregular = true;
    set({ ...base, ...patch, ...mark } as ChatSessionState, true);
  }) as SessionStore['setState'];
  return store;
}

/** Whether a patch writes any field of the live mark (a loop: no closure per write). */
function writesMark(patch: object): boolean {
  for (let index = 0; index < LIVE_MARK_KEYS.length; index++) {
    if ((LIVE_MARK_KEYS[index] as LiveMarkKey) in patch) return true;
  }
  return false;
}
