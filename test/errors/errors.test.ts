import { describe, expect, it } from 'vitest';
import {
  AuthError,
  DurableChatError,
  HttpError,
  httpErrorFromResponse,
  isDurableChatError,
  PayloadTooLargeError,
  RateLimitedError,
  ServerError,
  SessionClosedError,
} from '../../src/errors/index.js';

describe('httpErrorFromResponse', () => {
  const map = (status: number, body?: unknown, headers?: Headers) =>
    httpErrorFromResponse({ status, operation: 'append to .in', body, headers });

  it.each([
    [401, AuthError, 'UNAUTHORIZED', true],
    [403, AuthError, 'FORBIDDEN', true],
    [409, SessionClosedError, 'SESSION_CLOSED', false],
    [413, PayloadTooLargeError, 'PAYLOAD_TOO_LARGE', false],
    [429, RateLimitedError, 'RATE_LIMITED', true],
    [500, ServerError, 'SERVER_ERROR', true],
    [503, ServerError, 'SERVER_ERROR', true],
    [400, HttpError, 'BAD_REQUEST', false],
    [404, HttpError, 'NOT_FOUND', false],
    [418, HttpError, 'HTTP_ERROR', false],
  ] as const)('maps %i to %s with code %s', (status, type, code, retryable) => {
    const error = map(status);
    expect(error).toBeInstanceOf(type);
    expect(error.code).toBe(code);
    expect(error.retryable).toBe(retryable);
    expect(error.status).toBe(status);
    expect(isDurableChatError(error)).toBe(true);
  });

  it('reads the rate-limit headers (reset in epoch ms)', () => {
    const headers = new Headers({
      'x-ratelimit-reset': '1800000000000',
      'x-ratelimit-limit': '60',
      'x-ratelimit-remaining': '0',
    });
    const error = map(429, undefined, headers) as RateLimitedError;
    expect(error.resetAt).toBe(1_800_000_000_000);
    expect(error.limit).toBe(60);
    expect(error.remaining).toBe(0);
  });

  it('keeps the closed reason of a 409 and the server text, never more', () => {
    const error = map(409, { ok: false, error: 'closed', code: 'session_closed', closedReason: 'done' });
    expect(error).toBeInstanceOf(SessionClosedError);
    expect((error as SessionClosedError).closedReason).toBe('done');
    expect(error.message).toContain('closed');
  });
});

describe('isDurableChatError', () => {
  it('survives a second copy of the class (marker, not instanceof)', () => {
    const foreign = Object.assign(new Error('x'), {
      [Symbol.for('durable-chat.error')]: true,
      code: 'SERVER_ERROR',
    });
    expect(isDurableChatError(foreign)).toBe(true);
    expect(DurableChatError.isInstance(foreign)).toBe(true);
    expect(isDurableChatError(new Error('plain'))).toBe(false);
    expect(isDurableChatError(null)).toBe(false);
    expect(isDurableChatError('SERVER_ERROR')).toBe(false);
  });

  it('keeps the cause', () => {
    const cause = new TypeError('fetch failed');
    const error = new DurableChatError({ code: 'NETWORK_ERROR', message: 'down', retryable: true, cause });
    expect(error.cause).toBe(cause);
  });
});
