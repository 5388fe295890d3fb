import { MAX_APPEND_BODY_BYTES } from '../protocol/limits.js';
import type { ChatSessionState } from './session-store.js';

/** What survives a reload for one chat: exactly what resuming needs, nothing more. */
export interface PersistedChatRecord {
  version: 1;
  chatId: string;
  sessionId: string | undefined;
  publicAccessToken: string | undefined;
  lastEventId: number | undefined;
  turnLive: boolean;
  /** The live turn's append was stored (absent in records written before it existed: false). */
  turnStored?: boolean;
  /** A turn this page stopped but never saw end (see `ChatSessionState.stoppedTurn`). */
  stoppedTurn?: 'started' | 'unstarted';
  /** The live turn's unanswered append (see `ChatSessionState.pendingAppend`). */
  pendingAppend?: { partId: string; body: string };
  turnStartCursor: number | undefined;
  /** The user message the live turn answers, as JSON (see `ChatSessionState.turnMessage`). */
  turnMessage?: string;
  closed: boolean;
  closedReason: string | null;
}

/**
 * Storage for persisted chat records. Any method may return a promise. `load` returns
 * whatever was stored (the client validates it and discards a corrupt record with a
 * warning); `save` must replace the record in one write so a crash never leaves half of it.
 */
export interface SessionPersistence {
  /**
   * Names the storage behind this adapter (optional). The React hooks tell sessions apart by
   * it: two adapter objects with the same `id` are the same storage (an adapter created
   * inline, anew per render, keeps its session), another `id` switches to a fresh session.
   */
  readonly id?: string;
  load(chatId: string): unknown | Promise<unknown>;
  save(chatId: string, record: PersistedChatRecord): void | Promise<void>;
  remove(chatId: string): void | Promise<void>;
}

export const PERSISTED_RECORD_VERSION = 1;

export function toPersistedRecord(state: ChatSessionState): PersistedChatRecord {
  return {
    version: 1,
    chatId: state.chatId,
    sessionId: state.sessionId,
    // A closed session's token is worth nothing to the chat and something to whoever reads
    // the storage next: it is not kept. The closed marker stays, for other tabs and reloads.
    publicAccessToken: state.closed ? undefined : state.token,
    lastEventId: state.lastEventId,
    turnLive: state.turnLive,
    turnStored: state.turnStored,
    stoppedTurn: state.stoppedTurn,
    pendingAppend: state.pendingAppend,
    turnStartCursor: state.turnStartCursor,
    // Only the live turn's: a finished turn's message is the app's transcript's business.
    turnMessage: state.turnLive ? state.turnMessage : undefined,
    closed: state.closed,
    closedReason: state.closedReason,
  };
}

function optional<T>(value: unknown, check: (value: unknown) => value is T): T | undefined | false {
  if (value === undefined || value === null) return undefined;
  return check(value) ? value : false;
}

const isString = (value: unknown): value is string => typeof value === 'string' && value !== '';
const isCursor = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

/**
 * Validates a stored value (an object, or its JSON text) as a record for `chatId`.
 * Returns a reason string instead of throwing when it is unusable.
 */
export function parsePersistedRecord(value: unknown, chatId: string): PersistedChatRecord | string {
  let raw = value;
  if (typeof raw === 'string') {
    try {
      raw = JSON.parse(raw);
    } catch {
      return 'not JSON';
    }
  }
  if (typeof raw !== 'object' || raw === null) return 'not an object';
  const record = raw as Record<string, unknown>;
  if (record.version !== PERSISTED_RECORD_VERSION) return `unknown version ${String(record.version)}`;
  if (record.chatId !== chatId) return 'stored for another chat';
  const sessionId = optional(record.sessionId, isString);
  const publicAccessToken = optional(record.publicAccessToken, isString);
  const lastEventId = optional(record.lastEventId, isCursor);
  const turnStartCursor = optional(record.turnStartCursor, isCursor);
  if (sessionId === false || publicAccessToken === false) return 'bad session id or token';
  if (lastEventId === false || turnStartCursor === false) return 'bad cursor';
  if (typeof record.closed !== 'boolean' || typeof record.turnLive !== 'boolean') return 'bad flags';
  const closedReason = typeof record.closedReason === 'string' ? record.closedReason : null;
  return {
    version: 1,
    chatId,
    sessionId,
    publicAccessToken,
    lastEventId,
    turnLive: record.turnLive,
    turnStored: record.turnStored === true,
    stoppedTurn:
      record.stoppedTurn === 'started' || record.stoppedTurn === 'unstarted' ? record.stoppedTurn : undefined,
    pendingAppend: readPendingAppend(record.pendingAppend),
    turnStartCursor,
    turnMessage:
      typeof record.turnMessage === 'string' && record.turnMessage.length <= MAX_APPEND_BODY_BYTES
        ? record.turnMessage
        : undefined,
    closed: record.closed,
    closedReason,
  };
}

/** A saved unanswered append, or nothing when the stored value is not one (it is then dropped). */
function readPendingAppend(value: unknown): { partId: string; body: string } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { partId, body } = value as Record<string, unknown>;
  if (typeof partId !== 'string' || partId === '' || partId.length > 128) return undefined;
  if (typeof body !== 'string' || body === '' || body.length > MAX_APPEND_BODY_BYTES) return undefined;
  return { partId, body };
}

/** Keeps records in a Map (per page, or shared between clients in tests). */
export function memoryPersistence(map: Map<string, PersistedChatRecord> = new Map()): SessionPersistence {
  return {
    load: (chatId) => map.get(chatId),
    save: (chatId, record) => {
      map.set(chatId, { ...record });
    },
    remove: (chatId) => {
      map.delete(chatId);
    },
  };
}

interface StorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/**
 * One JSON string per chat under `${prefix}${chatId}` (one `setItem`, so it is atomic).
 * `storage` defaults to `globalThis.localStorage`, read per call; without one the adapter
 * keeps nothing.
 */
export function localStoragePersistence(
  options: { prefix?: string; storage?: StorageLike } = {},
): SessionPersistence {
  const prefix = options.prefix ?? 'durable-chat:';
  const storage = () =>
    options.storage ?? (globalThis as { localStorage?: StorageLike }).localStorage ?? undefined;
  return {
    load: (chatId) => storage()?.getItem(prefix + chatId) ?? undefined,
    save: (chatId, record) => storage()?.setItem(prefix + chatId, JSON.stringify(record)),
    remove: (chatId) => storage()?.removeItem(prefix + chatId),
  };
}
