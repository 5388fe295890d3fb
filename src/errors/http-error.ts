import { DurableChatError, type DurableChatErrorCode } from './durable-chat-error.js';

export type HttpErrorCode =
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'BAD_REQUEST'
  | 'SESSION_CLOSED'
  | 'PAYLOAD_TOO_LARGE'
  | 'RATE_LIMITED'
  | 'SERVER_ERROR'
  | 'HTTP_ERROR';

export interface HttpErrorOptions {
  status: number;
  /** What was being done, e.g. `append to .in` (never a URL with a token in it). */
  operation: string;
  /** The `error` text of the response body, if any. */
  serverMessage?: string;
  /** The `code` of the response body, if any: the chat route's stable code reaches the browser's error. */
  serverCode?: string;
  cause?: unknown;
}

/** A non-2xx response. */
export class HttpError extends DurableChatError {
  override readonly code: HttpErrorCode;
  override readonly status: number;
  readonly serverMessage: string | undefined;
  readonly serverCode: string | undefined;

  constructor(options: HttpErrorOptions & { code?: HttpErrorCode; retryable?: boolean; message?: string }) {
    const code = options.code ?? 'HTTP_ERROR';
    super({
      code,
      message: options.message ?? describeHttpFailure(options, code),
      retryable: options.retryable ?? false,
      status: options.status,
      cause: options.cause,
    });
    this.name = 'HttpError';
    this.code = code;
    this.status = options.status;
    this.serverMessage = options.serverMessage;
    this.serverCode = options.serverCode;
  }
}

/** `<operation> failed with HTTP <status> (<code>): <server message>`, every HTTP failure's message. */
export function describeHttpFailure(options: HttpErrorOptions, code: DurableChatErrorCode): string {
  const detail = options.serverMessage ? `: ${options.serverMessage}` : '';
  return `${options.operation} failed with HTTP ${options.status} (${code})${detail}`;
}

/**
 * 401 or 403: the token is missing, expired, revoked or lacks a scope. Refresh, then retry
 * once. `retryable: false` when no fresh token can help (the app's own route refused).
 */
export class AuthError extends HttpError {
  constructor(options: HttpErrorOptions & { retryable?: boolean }) {
    super({
      ...options,
      code: options.status === 403 ? 'FORBIDDEN' : 'UNAUTHORIZED',
      retryable: options.retryable ?? true,
    });
    this.name = 'AuthError';
  }
}

/** 409: the session is closed. Terminal: stop reading, refuse later sends. */
export class SessionClosedError extends HttpError {
  readonly closedReason: string | null;
  /** Without `status`, the chat already knew it was closed: no request was answered 409 this time. */
  constructor(options: Partial<HttpErrorOptions> & { closedReason?: string | null }) {
    const operation = options.operation ?? 'session';
    const serverMessage = options.serverMessage ?? 'the session is closed';
    const reason = options.closedReason ? ` (reason: ${options.closedReason})` : '';
    const what =
      options.status === undefined
        ? `${operation}: the session is closed`
        : describeHttpFailure({ status: options.status, operation, serverMessage }, 'SESSION_CLOSED');
    super({
      status: options.status ?? 409,
      operation,
      serverMessage,
      serverCode: options.serverCode,
      cause: options.cause,
      code: 'SESSION_CLOSED',
      retryable: false,
      message: `${what}${reason}; it takes no more messages: start a new chat (a new chat id)`,
    });
    this.name = 'SessionClosedError';
    this.closedReason = options.closedReason ?? null;
  }
}

/** 413: the record is over the store's ceiling. Never retried. */
export class PayloadTooLargeError extends HttpError {
  constructor(options: HttpErrorOptions) {
    super({ ...options, code: 'PAYLOAD_TOO_LARGE', retryable: false });
    this.name = 'PayloadTooLargeError';
  }
}

/** 429: wait until `resetAt` (epoch ms, when the server said), then retry. */
export class RateLimitedError extends HttpError {
  /** When to retry: `x-ratelimit-reset` as sent (see `normalizeResetAt`), else `Retry-After` (seconds, or a date in epoch ms). */
  readonly resetAt: number | undefined;
  readonly limit: number | undefined;
  readonly remaining: number | undefined;
  /** The response's `Date` (epoch ms): the server's clock, against which `resetAt` is meant. */
  readonly serverDate: number | undefined;
  constructor(
    options: HttpErrorOptions & { resetAt?: number; limit?: number; remaining?: number; serverDate?: number },
  ) {
    super({ ...options, code: 'RATE_LIMITED', retryable: true });
    this.name = 'RateLimitedError';
    this.resetAt = options.resetAt;
    this.serverDate = options.serverDate;
    this.limit = options.limit;
    this.remaining = options.remaining;
  }
}

/** 5xx: a transient failure on the server. Safe to retry with the same `X-Part-Id`. */
export class ServerError extends HttpError {
  /** The response's `Retry-After` (seconds, or a date in epoch ms): no retry before it. */
  readonly resetAt: number | undefined;
  /** The response's `Date` (epoch ms), as on `RateLimitedError`. */
  readonly serverDate: number | undefined;
  constructor(options: HttpErrorOptions & { resetAt?: number; serverDate?: number }) {
    super({ ...options, code: 'SERVER_ERROR', retryable: true });
    this.name = 'ServerError';
    this.resetAt = options.resetAt;
    this.serverDate = options.serverDate;
  }
}

function numberHeader(headers: Headers | undefined, name: string): number | undefined {
  const raw = headers?.get(name);
  if (raw == null || raw.trim() === '') return undefined;
  const value = Number(raw);
  return Number.isFinite(value) ? value : undefined;
}

function dateHeader(headers: Headers | undefined, name = 'date'): number | undefined {
  const raw = headers?.get(name);
  if (raw == null) return undefined;
  const value = Date.parse(raw);
  return Number.isFinite(value) ? value : undefined;
}

/** HTTP's `Retry-After`: seconds from now (read as `normalizeResetAt`'s delta form) or a date (epoch ms). */
function retryAfter(headers: Headers | undefined): number | undefined {
  return numberHeader(headers, 'retry-after') ?? dateHeader(headers, 'retry-after');
}

/**
 * Maps a failed response to the right error class. `body` is the parsed JSON body when
 * there was one; its `code` (not its text) decides a 409.
 */
export function httpErrorFromResponse(options: {
  status: number;
  operation: string;
  body?: unknown;
  headers?: Headers;
}): HttpError {
  const { status, operation, headers } = options;
  const body = (typeof options.body === 'object' && options.body !== null ? options.body : {}) as Record<
    string,
    unknown
  >;
  const serverMessage = typeof body.error === 'string' ? body.error.slice(0, 500) : undefined;
  const serverCode = typeof body.code === 'string' ? body.code.slice(0, 100) : undefined;
  const base = { status, operation, serverMessage, serverCode };
  if (status === 401 || status === 403) return new AuthError(base);
  if (status === 409) {
    const closedReason = typeof body.closedReason === 'string' ? body.closedReason : null;
    return new SessionClosedError({ ...base, closedReason });
  }
  if (status === 413) return new PayloadTooLargeError(base);
  if (status === 429) {
    return new RateLimitedError({
      ...base,
      // Else HTTP's own `Retry-After`.
      resetAt: numberHeader(headers, 'x-ratelimit-reset') ?? retryAfter(headers),
      limit: numberHeader(headers, 'x-ratelimit-limit'),
      remaining: numberHeader(headers, 'x-ratelimit-remaining'),
      serverDate: dateHeader(headers),
    });
  }
  // A 503 may say when to come back (a deploy, an overload): retrying sooner only adds load.
  if (status >= 500)
    return new ServerError({ ...base, resetAt: retryAfter(headers), serverDate: dateHeader(headers) });
  if (status === 400) return new HttpError({ ...base, code: 'BAD_REQUEST' });
  if (status === 404) return new HttpError({ ...base, code: 'NOT_FOUND' });
  return new HttpError(base);
}
