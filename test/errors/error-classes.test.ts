import { describe, expect, it } from 'vitest';
import { rateLimitDelay, resolveRetryOptions } from '../../src/client/retry-policy.js';
import {
  AuthError,
  ConnectionError,
  DurableChatError,
  HttpError,
  httpErrorFromResponse,
  isDurableChatError,
  PayloadTooLargeError,
  ProtocolError,
  RateLimitedError,
  ServerError,
  SessionClosedError,
  TurnRejectedError,
  ValidationError,
} from '../../src/errors/index.js';

describe('every error class', () => {
  const samples: [string, DurableChatError, string, boolean][] = [
    [
      'ProtocolError',
      new ProtocolError({ code: 'MALFORMED_RECORD', message: 'm', seqNum: 3 }),
      'MALFORMED_RECORD',
      false,
    ],
    ['ValidationError', new ValidationError({ message: 'm' }), 'INVALID_INPUT', false],
    ['ConnectionError', new ConnectionError({ code: 'NETWORK_ERROR', message: 'm' }), 'NETWORK_ERROR', true],
    ['TurnRejectedError', new TurnRejectedError(), 'TURN_REJECTED', false],
    ['SessionClosedError', new SessionClosedError({}), 'SESSION_CLOSED', false],
    ['AuthError', new AuthError({ status: 401, operation: 'op' }), 'UNAUTHORIZED', true],
    [
      'PayloadTooLargeError',
      new PayloadTooLargeError({ status: 413, operation: 'op' }),
      'PAYLOAD_TOO_LARGE',
      false,
    ],
    ['RateLimitedError', new RateLimitedError({ status: 429, operation: 'op' }), 'RATE_LIMITED', true],
    ['ServerError', new ServerError({ status: 502, operation: 'op' }), 'SERVER_ERROR', true],
  ];

  it.each(samples)(
    '%s is a DurableChatError with a stable code, name and stack',
    (name, error, code, retryable) => {
      expect(error).toBeInstanceOf(Error);
      expect(error).toBeInstanceOf(DurableChatError);
      expect(isDurableChatError(error)).toBe(true);
      expect(error.name).toBe(name);
      expect(error.code).toBe(code);
      expect(error.retryable).toBe(retryable);
      expect(error.stack).toContain(name);
    },
  );
});

describe('ConnectionError and TurnRejectedError', () => {
  it('is retryable except when aborted', () => {
    for (const code of ['NETWORK_ERROR', 'STREAM_DISCONNECTED', 'TOKEN_UNAVAILABLE'] as const) {
      expect(new ConnectionError({ code, message: 'x' }).retryable).toBe(true);
    }
    expect(new ConnectionError({ code: 'ABORTED', message: 'x' }).retryable).toBe(false);
  });

  it('keeps a cause and a custom message', () => {
    const cause = new Error('socket hang up');
    expect(new ConnectionError({ code: 'NETWORK_ERROR', message: 'x', cause }).cause).toBe(cause);
    expect(new TurnRejectedError('bad metadata').message).toBe('bad metadata');
    expect(new TurnRejectedError().message).toContain('validation');
  });

  it('has no cause property when none is given', () => {
    expect('cause' in new ConnectionError({ code: 'ABORTED', message: 'x' })).toBe(false);
  });
});

describe('ProtocolError and ValidationError details', () => {
  it('ProtocolError carries the seq_num of the bad record', () => {
    const error = new ProtocolError({ code: 'MALFORMED_BATCH', message: 'm' });
    expect(error.seqNum).toBeUndefined();
    expect(new ProtocolError({ code: 'MALFORMED_RECORD', message: 'm', seqNum: 0 }).seqNum).toBe(0);
  });

  it('ValidationError carries field, bytes and limit', () => {
    const error = new ValidationError({
      code: 'PAYLOAD_TOO_LARGE',
      message: 'm',
      field: 'body',
      bytes: 9,
      limit: 8,
    });
    expect(error).toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      field: 'body',
      bytes: 9,
      limit: 8,
      retryable: false,
    });
    expect(new ValidationError({ message: 'm' })).toMatchObject({
      field: undefined,
      bytes: undefined,
      limit: undefined,
    });
  });
});

describe('httpErrorFromResponse edge cases', () => {
  const map = (status: number, body?: unknown, headers?: Headers) =>
    httpErrorFromResponse({ status, operation: 'append to .in', body, headers });

  it.each([[502], [504], [599]])('maps %i to ServerError', (status) => {
    expect(map(status)).toBeInstanceOf(ServerError);
  });

  it.each([[301], [402], [422]])('maps %i to a plain non-retryable HttpError', (status) => {
    const error = map(status);
    expect(error.constructor).toBe(HttpError);
    expect(error).toMatchObject({ code: 'HTTP_ERROR', retryable: false, status });
  });

  it.each([[undefined], [null], ['text body'], [[1, 2]], [{ error: 42 }]])(
    'tolerates a body of %j',
    (body) => {
      const error = map(500, body);
      expect(error.serverMessage).toBeUndefined();
      expect(error.message).toBe('append to .in failed with HTTP 500 (SERVER_ERROR)');
    },
  );

  it('caps the server text at 500 characters', () => {
    const error = map(400, { ok: false, error: 'x'.repeat(2000) });
    expect(error.serverMessage).toHaveLength(500);
    expect(error.message.length).toBeLessThan(600);
  });

  it('gives a 409 without a string closedReason a null reason, and never keys on its text', () => {
    expect(
      (map(409, { ok: false, error: 'nope', closedReason: 5 }) as SessionClosedError).closedReason,
    ).toBeNull();
    expect(map(409, { ok: false, error: 'something unrelated' })).toBeInstanceOf(SessionClosedError);
  });

  it('leaves rate-limit fields undefined when headers are absent, blank or not numbers', () => {
    const blank = map(429, undefined, new Headers({ 'x-ratelimit-reset': ' ', 'x-ratelimit-limit': 'many' }));
    expect(blank).toMatchObject({ resetAt: undefined, limit: undefined, remaining: undefined });
    expect(map(429)).toMatchObject({ resetAt: undefined });
  });

  it('reads a 429 without x-ratelimit-reset by its Retry-After: seconds, or an HTTP date', () => {
    const now = Date.UTC(2026, 10, 29, 12, 0, 0);
    const defaults = resolveRetryOptions(undefined);
    const seconds = map(429, undefined, new Headers({ 'retry-after': '2' })) as RateLimitedError;
    expect(rateLimitDelay(1, seconds.resetAt, now, defaults, 0)).toBe(2_000);
    const date = new Date(now + 7_000).toUTCString();
    const dated = map(429, undefined, new Headers({ 'retry-after': date })) as RateLimitedError;
    expect(rateLimitDelay(1, dated.resetAt, now, defaults, 0)).toBe(7_000);
    // x-ratelimit-reset (the wire notes' header) wins; a Retry-After beyond maxRateLimitWaitMs gives up.
    const both = new Headers({ 'retry-after': '2', 'x-ratelimit-reset': String(now + 5_000) });
    expect(rateLimitDelay(1, (map(429, undefined, both) as RateLimitedError).resetAt, now, defaults, 0)).toBe(
      5_000,
    );
    const far = map(429, undefined, new Headers({ 'retry-after': '3600' })) as RateLimitedError;
    expect(rateLimitDelay(1, far.resetAt, now, defaults, 0)).toBeUndefined();
  });

  it("reads a 5xx's Retry-After like a 429's, and leaves it undefined without one", () => {
    const now = Date.UTC(2026, 10, 29, 12, 0, 0);
    const defaults = resolveRetryOptions(undefined);
    const seconds = map(503, undefined, new Headers({ 'retry-after': '3' })) as ServerError;
    expect(seconds).toBeInstanceOf(ServerError);
    expect(rateLimitDelay(1, seconds.resetAt, now, defaults, 0)).toBe(3_000);
    const date = new Date(now + 4_000).toUTCString();
    expect(
      rateLimitDelay(
        1,
        (map(502, undefined, new Headers({ 'retry-after': date })) as ServerError).resetAt,
        now,
        defaults,
        0,
      ),
    ).toBe(4_000);
    expect(map(500)).toMatchObject({ code: 'SERVER_ERROR', resetAt: undefined });
  });

  it('SessionClosedError defaults to 409 and a null reason', () => {
    expect(new SessionClosedError({})).toMatchObject({
      status: 409,
      closedReason: null,
      code: 'SESSION_CLOSED',
    });
  });
});
