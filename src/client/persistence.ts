import { MAX_APPEND_BODY_BYTES } from '../protocol/limits.js';
import type { ChatSessionState } from './session-store.js';
import {
  boundTurns,
  KEPT_TURNS,
  type LegacyLiveFields,
  type LiveMark,
  liveMark,
  MAX_QUEUED_TURNS,
  type TurnRecord,
  turnsFromLegacy,
} from './turn-records.js';

/**
 * What survives a reload for one chat: exactly what resuming needs, nothing more. The chat's
 * turns are `turns` (its bounded turn ledger); the live-turn fields beside it are read from
 * it and written for readers of the format before it (a tab still on an older build), and a
 * record of that format (no `turns`) is read from them (`turnsFromLegacy`).
 */
export interface PersistedChatRecord extends LegacyLiveFields {
  version: 1;
  chatId: string;
  sessionId: string | undefined;
  publicAccessToken: string | undefined;
  lastEventId: number | undefined;
  /** The chat's turn ledger (see `TurnRecord`); always set on a record read back. */
  turns?: TurnRecord[];
  /** The user message the live turn answers, as JSON (see `ChatSessionState.turnMessage`). */
  turnMessage?: string;
  closed: boolean;
  closedReason: string | null;
  /**
   * When this page learned the session was closed (epoch ms). A closed record is a tombstone:
   * the closed marker alone, for other tabs and reloads, removed once it is
   * `CLOSED_RECORD_TTL_MS` old (the server still answers 409 after that).
   */
  closedAt?: number;
}

/**
 * Storage for persisted chat records. Any method may return a promise. `load` returns
 * whatever was stored (the client validates it and discards a corrupt record with a
 * warning); `save` must replace the record in one write so a crash never leaves half of it.
 */
export interface SessionPersistence {
  /**
   * Whose records this adapter keeps (the signed-in user's id), when it keeps one user's
   * alone: `scopedPersistence(adapter, userId)` sets it, and an adapter that is per user by
   * itself (a server-side store keyed by the session cookie) may declare it. Only then does a
   * record keep the session token, so a reload resumes without asking the app's route; a
   * record of an unscoped adapter never holds one (whoever opens the chat next in this
   * browser is authorized by the route first). See docs/security.md.
   */
  readonly scope?: string;
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

/**
 * How long a closed session's tombstone is kept: long enough that a reload the same day
 * shows the chat closed without a request, bounded so closed chats do not pile up in the
 * browser's storage. After it the record is removed on load; the chat then learns the close
 * from the server (a 409 on its first request) and writes a new tombstone.
 */
export const CLOSED_RECORD_TTL_MS = 24 * 60 * 60 * 1000;

export interface PersistOptions {
  /** Keep the session token (only for a scoped adapter: see `SessionPersistence.scope`). */
  keepToken: boolean;
  /** When the close was learned, for a closed state's tombstone. */
  closedAt?: number;
}

/**
 * The record that stands for `state`. A closed session leaves a tombstone (no session id,
 * token, cursor or unanswered message: nothing that lets anyone read or write the session);
 * an open one keeps the token only where `keepToken` says so.
 */
export function toPersistedRecord(state: ChatSessionState, options: PersistOptions): PersistedChatRecord {
  if (state.closed) {
    return {
      version: 1,
      chatId: state.chatId,
      sessionId: undefined,
      publicAccessToken: undefined,
      lastEventId: undefined,
      turnLive: false,
      turnStartCursor: undefined,
      closed: true,
      closedReason: state.closedReason,
      closedAt: options.closedAt,
    };
  }
  return {
    version: 1,
    chatId: state.chatId,
    sessionId: state.sessionId,
    publicAccessToken: options.keepToken ? state.token : undefined,
    lastEventId: state.lastEventId,
    turns: [...boundTurns(state.turns)],
    ...legacyFields(state),
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
  const legacy: PersistedChatRecord = {
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
    // Unusable values are dropped, not fatal: without them a resume attributes by the edge rules.
    turnInSeq: isCursor(record.turnInSeq) ? record.turnInSeq : undefined,
    turnPriorInSeq: isCursor(record.turnPriorInSeq) ? record.turnPriorInSeq : undefined,
    turnMessage:
      typeof record.turnMessage === 'string' && record.turnMessage.length <= MAX_APPEND_BODY_BYTES
        ? record.turnMessage
        : undefined,
    queuedTurns: readQueuedTurns(record.queuedTurns),
    closed: record.closed,
    closedReason,
    closedAt: isCursor(record.closedAt) ? record.closedAt : undefined,
  };
  // A record without a usable ledger (written before it existed) is read from its fields.
  const turns = legacy.closed ? [] : (readTurns(record.turns) ?? turnsFromLegacy(legacy));
  const mark = liveMark(turns);
  return {
    ...legacy,
    turns,
    ...legacyFields(mark),
    turnMessage: mark.turnLive ? legacy.turnMessage : undefined,
  };
}

/** The live-turn fields of the format before the ledger, read from it (`liveMark`). */
function legacyFields(mark: LiveMark): LegacyLiveFields {
  const { turnLive, turnStored, stoppedTurn, pendingAppend, turnStartCursor, turnInSeq, turnPriorInSeq } =
    mark;
  return {
    turnLive,
    turnStored,
    stoppedTurn,
    pendingAppend,
    turnStartCursor,
    turnInSeq,
    turnPriorInSeq,
    queuedTurns: mark.queuedTurns.length === 0 ? undefined : mark.queuedTurns.map((seq) => seq ?? null),
  };
}

const TURN_KINDS = new Set(['message', 'regenerate', 'action', 'queued', 'found']);
const TURN_STATES = new Set(['sent', 'stored', 'started', 'read', 'queued', 'over', 'stopped', 'failed']);
/** Live and queued entries are kept whatever their number; this bounds a corrupt list. */
const MAX_STORED_TURNS = KEPT_TURNS + MAX_QUEUED_TURNS + 8;

/** A saved ledger, or nothing when any entry is unusable (the fields beside it are read instead). */
function readTurns(value: unknown): TurnRecord[] | undefined {
  if (!Array.isArray(value) || value.length > MAX_STORED_TURNS) return undefined;
  const turns: TurnRecord[] = [];
  for (const item of value) {
    const { id, kind, state, partId, seq, priorSeq, startCursor, body, stopMark } = (item ?? {}) as Record<
      string,
      unknown
    >;
    const usable =
      isCursor(id) &&
      TURN_KINDS.has(kind as string) &&
      TURN_STATES.has(state as string) &&
      [seq, priorSeq, startCursor].every((cursor) => cursor == null || isCursor(cursor)) &&
      (partId == null || (isString(partId) && partId.length <= 128)) &&
      (body == null || (isString(body) && body.length <= MAX_APPEND_BODY_BYTES)) &&
      (stopMark == null || stopMark === 'started' || stopMark === 'unstarted');
    if (!usable) return undefined;
    turns.push(item as TurnRecord);
  }
  return turns;
}

/** A closed record older than the TTL (one without a date is dated when first loaded). */
export function tombstoneExpired(record: PersistedChatRecord, now: number): boolean {
  return record.closed && record.closedAt !== undefined && now - record.closedAt >= CLOSED_RECORD_TTL_MS;
}

/** Saved queued turns, or nothing when the stored value is not a list of them (dropped: not resumed). */
function readQueuedTurns(value: unknown): (number | null)[] | undefined {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_QUEUED_TURNS) return undefined;
  return value.every((seq) => seq === null || isCursor(seq)) ? (value as (number | null)[]) : undefined;
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

export interface StorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/**
 * One JSON string per chat under `${prefix}${chatId}` (one `setItem`, so it is atomic) in the
 * storage `storage()` returns, read per call; nothing is kept while it returns none.
 */
export function storagePersistence(
  prefix: string,
  storage: () => StorageLike | undefined,
): SessionPersistence {
  return {
    load: (chatId) => storage()?.getItem(prefix + chatId) ?? undefined,
    save: (chatId, record) => storage()?.setItem(prefix + chatId, JSON.stringify(record)),
    remove: (chatId) => storage()?.removeItem(prefix + chatId),
  };
}

/**
 * One JSON string per chat under `${prefix}${chatId}` (one `setItem`, so it is atomic).
 * `storage` defaults to `globalThis.localStorage`, read per call; without one the adapter
 * keeps nothing, and says so once (`warn`, default `console.warn`): a chat that forgets
 * every reload must not look like a bug elsewhere.
 */
export function localStoragePersistence(
  options: { prefix?: string; storage?: StorageLike; warn?: (message: string) => void } = {},
): SessionPersistence {
  let warned = false;
  return storagePersistence(options.prefix ?? 'durable-chat:', () => {
    const found = options.storage ?? (globalThis as { localStorage?: StorageLike }).localStorage ?? undefined;
    if (found === undefined && !warned) {
      warned = true;
      (options.warn ?? console.warn)(
        '[durable-chat] localStoragePersistence: no localStorage here (server rendering, Node, storage ' +
          'disabled): nothing is kept across reloads. Create it in the browser only, pass { storage }, or ' +
          'use memoryPersistence().',
      );
    }
    return found;
  });
}
