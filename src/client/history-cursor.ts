import {
  memoryPersistence,
  type PersistedChatRecord,
  parsePersistedRecord,
  type SessionPersistence,
} from './persistence.js';
import type { ChatSessionState } from './session-store.js';

/**
 * Where on the chat's `.out` a saved transcript ends: save it with the messages (in the
 * app's own store, next to them) and give it back when the chat loads, so the live read
 * starts right after what the transcript holds: nothing replayed, nothing missed.
 */
export interface HistoryCursor {
  version: 1;
  chatId: string;
  /** The `session_*` id the transcript belongs to (undefined before the session started). */
  sessionId: string | undefined;
  /**
   * The last `.out` record the transcript holds. While a turn is live this is where that turn
   * starts: its reply is rebuilt from there on load, whether it is still running or ended
   * while the page was away (a partial reply saved with the messages is replaced, by id).
   */
  cursor: number | undefined;
}

type CursorState = Pick<
  ChatSessionState,
  'chatId' | 'sessionId' | 'lastEventId' | 'turnLive' | 'turnStartCursor'
>;

/**
 * What to save with a chat's messages, read from its state (`client.getState()`, or
 * `session.source.getState()` in React) at the moment the messages are saved.
 */
export function historyCursor(state: CursorState): HistoryCursor {
  return {
    version: 1,
    chatId: state.chatId,
    sessionId: state.sessionId,
    cursor: state.turnLive ? state.turnStartCursor : state.lastEventId,
  };
}

const isCursor = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

/** A saved cursor read back from the app's store (its JSON text, or the parsed value); undefined when unusable. */
export function parseHistoryCursor(value: unknown): HistoryCursor | undefined {
  let raw = value;
  if (typeof raw === 'string') {
    try {
      raw = JSON.parse(raw);
    } catch {
      return undefined;
    }
  }
  if (typeof raw !== 'object' || raw === null) return undefined;
  const { version, chatId, sessionId, cursor } = raw as Record<string, unknown>;
  if (version !== 1 || typeof chatId !== 'string' || chatId === '') return undefined;
  if (sessionId !== undefined && sessionId !== null && (typeof sessionId !== 'string' || sessionId === ''))
    return undefined;
  if (cursor !== undefined && cursor !== null && !isCursor(cursor)) return undefined;
  return {
    version: 1,
    chatId,
    sessionId: typeof sessionId === 'string' ? sessionId : undefined,
    cursor: isCursor(cursor) ? cursor : undefined,
  };
}

/** The chat id a persistence key names: the key itself, or what follows a scope's `@scope:` prefix. */
function chatIdOfKey(key: string): string {
  // `scopedChatKey` encodes the scope, so its first `:` ends the prefix.
  return key.startsWith('@') && key.includes(':') ? key.slice(key.indexOf(':') + 1) : key;
}

/** `a` is further along `.out` than `b` (undefined: nothing read yet). */
const further = (a: number | undefined, b: number | undefined) => (a ?? -1) > (b ?? -1);

/**
 * The stored record of the same session is the one to start from: it is where the transcript
 * ends (nothing between them), or its turn is still live or stopped here (its own bookkeeping
 * resumes it; the transcript's cursor is that turn's start at the latest when it was saved
 * mid-turn).
 */
function storedWins(stored: PersistedChatRecord, saved: HistoryCursor): boolean {
  if (further(saved.cursor, stored.lastEventId)) return false;
  if (!further(stored.lastEventId, saved.cursor)) return true;
  return stored.turnLive || stored.stoppedTurn !== undefined;
}

/**
 * The record the chat starts from: the stored one when it is where the transcript ends (or
 * its turn is live, see `storedWins`), else one at the transcript's cursor that reads on
 * from there as a turn that may be live (its token kept when it is for the same session).
 * A stored record further along whose turn is over does not win: the transcript was saved
 * before that turn ended (another tab's `onFinish` had not saved again yet), so the turn
 * after the cursor is read again and shown (a partial reply in the transcript replaced by
 * id); when that cursor was trimmed meanwhile, the read ends empty and says so
 * (`trimmed-cursor`). Nothing to seed without a session: a transcript saved before the
 * session started has nothing on `.out` to follow.
 */
function seededRecord(
  stored: PersistedChatRecord | undefined,
  saved: HistoryCursor,
): PersistedChatRecord | undefined {
  if (saved.sessionId === undefined) return undefined;
  if (stored?.closed === true) return undefined;
  const sameSession = stored?.sessionId === undefined || stored.sessionId === saved.sessionId;
  if (stored !== undefined && sameSession && storedWins(stored, saved)) return undefined;
  return {
    version: 1,
    chatId: saved.chatId,
    sessionId: saved.sessionId,
    publicAccessToken: sameSession ? stored?.publicAccessToken : undefined,
    lastEventId: saved.cursor,
    // Read on from the cursor as a turn whose reply may have begun: a live or finished turn
    // after it is shown from its start; a settled `.out` ends the read at once, empty.
    turns: [{ id: 0, kind: 'found', state: 'sent', startCursor: saved.cursor }],
    turnLive: true,
    turnStored: false,
    turnStartCursor: saved.cursor,
    closed: false,
    closedReason: null,
  };
}

/**
 * Wraps a persistence adapter so that `saved.chatId` starts from the transcript's cursor
 * when what is stored for it is missing or behind (another device, cleared storage, an app
 * that keeps history in its database). Applies to the chat's first load only (the one the
 * chat mounts with); every later load and every save goes to `adapter` unchanged. Without
 * an adapter the seed is kept in memory.
 */
export function withHistoryCursor(
  adapter: SessionPersistence | undefined,
  saved: HistoryCursor | undefined,
): SessionPersistence {
  const inner = adapter ?? memoryPersistence();
  if (saved === undefined) return inner;
  let pending = true;
  const wrapped: SessionPersistence = {
    load: async (key) => {
      const raw = await inner.load(key);
      if (!pending || chatIdOfKey(key) !== saved.chatId) return raw;
      pending = false;
      const parsed = raw === undefined || raw === null ? undefined : parsePersistedRecord(raw, saved.chatId);
      // A corrupt stored record goes back as it is: the client discards it and says so.
      if (typeof parsed === 'string') return raw;
      return seededRecord(parsed, saved) ?? raw;
    },
    save: (key, record) => inner.save(key, record),
    remove: (key) => inner.remove(key),
  };
  return inner.id === undefined ? wrapped : { ...wrapped, id: inner.id };
}
