import { createStore, type StoreApi } from 'zustand/vanilla';
import type { DurableChatError } from '../errors/durable-chat-error.js';

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
export interface ChatSessionState {
  chatId: string;
  /** Friendly `session_*` id when the app's `startSession` returned one. */
  sessionId: string | undefined;
  /** The session's public access token (a JWT). */
  token: string | undefined;
  /** Token expiry, epoch ms, read from its `exp` claim (never verified). */
  tokenExpiresAt: number | undefined;
  /** Last `seq_num` processed on `.out`, command and malformed records included. */
  lastEventId: number | undefined;
  /** True while a turn this client started (or found) has not seen its turn-complete. */
  turnLive: boolean;
  /**
   * The live turn's append was answered (stored on `.in`): its reply may not have begun, so a
   * reload resumes it without a settled-peek. False while the append is in flight.
   */
  turnStored: boolean;
  /**
   * This page stopped a turn it never saw end (see the transport): the next send skips that
   * turn's late records. `started`: its reply had begun; `unstarted`: not yet.
   */
  stoppedTurn: 'started' | 'unstarted' | undefined;
  /**
   * The live turn's message while its append is unanswered (its `X-Part-Id` and serialised
   * body): a reload sends it again under the same id, so the server stores it once, whether
   * or not the first attempt arrived. Cleared when the append is answered or given up.
   */
  pendingAppend: { partId: string; body: string } | undefined;
  /** `lastEventId` just before the live turn was sent: replaying from here rebuilds the turn. */
  turnStartCursor: number | undefined;
  /**
   * The `.in` seq of the input the live turn answers (this page's append), once answered: a
   * resumed turn is told from other inputs' turns by it, as its send was.
   */
  turnInSeq: number | undefined;
  /**
   * The highest `.in` seq answered at `turnStartCursor` (every input up to it had its turn
   * before the live one), when known: a `turnInSeq` above it + 1 means inputs of others (another
   * device, a steering message) sit between, and their turns come first.
   */
  turnPriorInSeq: number | undefined;
  /**
   * The user message the live turn answers (its UI message as JSON), when the page that sent it
   * noted it: a page that shows the turn again (coming back, a reload, another tab) brings the
   * message back with the reply. Persisted only while the turn is live.
   */
  turnMessage: string | undefined;
  /**
   * Inputs (actions) stored while the live turn ran, by `.in` seq (`undefined`: the server gave
   * none), oldest first: the agent answers each with a turn of its own after the live one, and
   * each goes live in turn when the one before is over. Persisted, so a reload shows each
   * queued output once. At most `MAX_QUEUED_TURNS`.
   */
  queuedTurns: readonly (number | undefined)[];
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

/**
 * Queued turns a chat keeps (and persists): more actions than this behind one live turn are a
 * runaway loop, not a user; the ones beyond it are not resumed.
 */
export const MAX_QUEUED_TURNS = 16;

export function initialSessionState(chatId: string): ChatSessionState {
  return {
    chatId,
    sessionId: undefined,
    token: undefined,
    tokenExpiresAt: undefined,
    lastEventId: undefined,
    turnLive: false,
    turnStored: false,
    stoppedTurn: undefined,
    pendingAppend: undefined,
    turnStartCursor: undefined,
    turnInSeq: undefined,
    turnPriorInSeq: undefined,
    turnMessage: undefined,
    queuedTurns: [],
    status: { type: 'idle' },
    runId: undefined,
    lastError: undefined,
    closed: false,
    closedReason: null,
    hydrated: false,
  };
}

/** A zustand vanilla store for one chat. React binds to it with `useStore`; nothing else here. */
export function createSessionStore(chatId: string): SessionStore {
  const store = createStore<ChatSessionState>()(() => initialSessionState(chatId));
  // The live turn's seqs describe that turn only: once it is over they go with it, whoever
  // ended it, so a later turn marked live by any path never inherits them.
  store.subscribe((next) => {
    if (!next.turnLive && (next.turnInSeq !== undefined || next.turnPriorInSeq !== undefined))
      store.setState({ turnInSeq: undefined, turnPriorInSeq: undefined });
  });
  return store;
}
