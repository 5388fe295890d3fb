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

/**
 * A zustand vanilla store for one chat. React binds to it with `useStore`; nothing else here.
 * The live mark (`turnLive` and the fields beside it) is read from `turns` on every write
 * that changes them, and a write of the mark itself is ignored: it is never set by hand.
 */
export function createSessionStore(chatId: string): SessionStore {
  const store = createStore<ChatSessionState>()(() => initialSessionState(chatId));
  const set = store.setState;
  store.setState = ((partial: unknown, replace?: boolean) =>
    set((state) => {
      const patch = (
        typeof partial === 'function' ? (partial as (s: ChatSessionState) => unknown)(state) : partial
      ) as Partial<ChatSessionState>;
      const base = replace === true ? undefined : state;
      // A write of `turns` (or of the mark by hand) gets the mark read from the turns.
      const mark =
        patch.turns !== undefined || LIVE_MARK_KEYS.some((key) => key in patch)
          ? liveMark(patch.turns ?? base?.turns ?? [])
          : undefined;
      // One spread, not zustand's `Object.assign({}, state, patch)`: V8 builds an object of this
      // many fields that way in dictionary mode, so every write copied a hash table (about
      // 2.5 KiB a write, `npm run bench:alloc`). A spread builds a fast object.
      return { ...base, ...patch, ...mark } as ChatSessionState;
    }, true)) as SessionStore['setState'];
  return store;
}
