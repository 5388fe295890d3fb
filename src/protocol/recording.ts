/**
 * A recording of one chat's life on the wire: every request the client made to the session
 * service with its answer (status, headers, the body as it arrived, with timing, and how the
 * connection ended), the app's `startSession` answers, and the client's events. Tokens never
 * appear: each one is replaced by a placeholder (`[redacted-token:N]`), and `tokens` keeps
 * only what each said about itself (scopes, time left), so a replay can mint stand-ins.
 *
 * The conversation's text is in it (the appends' bodies and the agent's chunks): treat a
 * recording like the chat it came from.
 */
export interface SessionRecording {
  format: typeof RECORDING_FORMAT;
  version: typeof RECORDING_VERSION;
  chatId: string;
  /** Epoch ms of the recording's start; every `at` below is ms after it. */
  startedAt: number;
  /** Older entries were dropped to keep the recording within its bounds. */
  truncated: boolean;
  tokens: RecordedToken[];
  /** The app's `startSession` answers, in order. */
  starts: RecordedStart[];
  exchanges: RecordedExchange[];
  /** The client's `SessionEvent`s (without `chatId`; errors as plain data). */
  events: RecordedEntry<RecordedEvent>[];
  /** What the client noted beyond its events: retries, liveness checks, tab hand-overs. */
  notes: RecordedEntry<Record<string, unknown> & { type: string }>[];
}

export const RECORDING_FORMAT = 'durable-chat-recording';
export const RECORDING_VERSION = 1;

/** Where a token was: `[redacted-token:1]`, `[redacted-token:2]`, … */
export const REDACTED_TOKEN = /\[redacted-token:(\d+)\]/g;

export function redactedTokenPlaceholder(id: number): string {
  return `[redacted-token:${id}]`;
}

export interface RecordedToken {
  id: number;
  /** How long the token had left when it was first seen (`undefined`: it did not say). */
  expiresInMs: number | undefined;
  scopes: string[] | undefined;
}

export interface RecordedStart {
  at: number;
  sessionId: string | undefined;
  isCached: boolean | undefined;
  currentRunId: string | null | undefined;
  /** The `publicAccessToken` it answered, as its placeholder id. */
  tokenId: number | undefined;
}

export interface RecordedEntry<T> {
  at: number;
  value: T;
}

/** A `SessionEvent` as data: `error` events carry the error's fields, not the instance. */
export type RecordedEvent = Record<string, unknown> & { type: string };

/** `append`: `.in`; `out`: `.out`; `other`: any other request to the service. */
export type ExchangeKind = 'append' | 'out' | 'other';

export interface RecordedExchange {
  kind: ExchangeKind;
  /** When the request went out. */
  at: number;
  request: {
    method: string;
    /** The URL's path (the session's id in it as it was). */
    path: string;
    /** The protocol's request headers; `authorization` as its placeholder. */
    headers: Record<string, string>;
    body?: string;
  };
  /** The answer, when one came. */
  response?: RecordedResponse;
  /** No answer: the request failed (`aborted`: the client gave up or stopped it). */
  failure?: { at: number; message: string; aborted: boolean };
}

export interface RecordedResponse {
  /** When the status and headers arrived. */
  at: number;
  status: number;
  headers: Record<string, string>;
  /** The body as it arrived, piece by piece (UTF-8 text). */
  frames: { at: number; text: string }[];
  /** Its first pieces were dropped to keep the recording within its bounds. */
  truncated?: boolean;
  /**
   * How the body ended: `complete` (the server ended it), `dropped` (the connection broke),
   * `aborted` (the client closed it), `open` (still open when the recording was taken).
   */
  end: { type: 'complete' | 'dropped' | 'aborted' | 'open'; at: number };
}

/** Which exchange kind a request path is. */
export function exchangeKindOf(method: string, path: string): ExchangeKind {
  if (method === 'POST' && /\/in\/append$/.test(path)) return 'append';
  if (method === 'GET' && /\/out$/.test(path)) return 'out';
  return 'other';
}

/**
 * Checks that a value is a recording this version can replay; throws a `TypeError` naming
 * what is wrong otherwise.
 */
export function assertRecording(value: unknown): asserts value is SessionRecording {
  const recording = value as Partial<SessionRecording> | null;
  if (typeof recording !== 'object' || recording === null)
    throw new TypeError('a recording is a JSON object');
  if (recording.format !== RECORDING_FORMAT)
    throw new TypeError(`not a durable-chat recording (format is ${JSON.stringify(recording.format)})`);
  if (recording.version !== RECORDING_VERSION)
    throw new TypeError(
      `recording version ${String(recording.version)} is not supported (this version reads ${RECORDING_VERSION})`,
    );
  for (const key of ['tokens', 'starts', 'exchanges', 'events', 'notes'] as const) {
    if (!Array.isArray(recording[key])) throw new TypeError(`a recording's "${key}" must be an array`);
  }
}
