import { describe, expect, it } from 'vitest';
import { ConnectionError } from '../../src/errors/connection-error.js';
import type { DurableChatError } from '../../src/errors/durable-chat-error.js';
import {
  AuthError,
  httpErrorFromResponse,
  RateLimitedError,
  ServerError,
} from '../../src/errors/http-error.js';
import { DEFAULT_RETRY_OPTIONS, retryDelay } from '../../src/server/retry-delay.js';

const options = { retries: 3, minDelayMs: 100, maxDelayMs: 1_000 };
const serverError = new ServerError({ status: 503, operation: 'create session' });
const networkError = new ConnectionError({ code: 'NETWORK_ERROR', message: 'down' });
const NOW = Date.UTC(2026, 10, 29, 12, 0, 0);
const base = { idempotent: true, options, now: NOW };

describe('retryDelay', () => {
  it('doubles the backoff per attempt, half of it jittered, capped at maxDelayMs', () => {
    const low = [1, 2, 3].map((attempt) =>
      retryDelay({ ...base, error: serverError, attempt, random: () => 0 }),
    );
    const high = [1, 2, 3].map((attempt) =>
      retryDelay({ ...base, error: serverError, attempt, random: () => 1 }),
    );
    expect(low).toEqual([50, 100, 200]);
    expect(high).toEqual([100, 200, 400]);
    const capped = retryDelay({
      ...base,
      options: { ...options, retries: 10 },
      error: networkError,
      attempt: 8,
      random: () => 1,
    });
    expect(capped).toBe(1_000);
  });

  it('gives up after the configured number of retries', () => {
    expect(retryDelay({ ...base, error: serverError, attempt: 4, random: () => 0 })).toBeUndefined();
    const off = {
      ...base,
      options: { ...options, retries: 0 },
      error: serverError,
      attempt: 1,
      random: () => 0,
    };
    expect(retryDelay(off)).toBeUndefined();
  });

  it('retries 5xx and network failures only when the request is idempotent', () => {
    for (const error of [serverError, networkError]) {
      expect(retryDelay({ ...base, idempotent: false, error, attempt: 1, random: () => 0 })).toBeUndefined();
      expect(retryDelay({ ...base, idempotent: true, error, attempt: 1, random: () => 0 })).toBe(50);
    }
  });

  it('waits for a 429 until the reset time, even when not idempotent', () => {
    const error = new RateLimitedError({ status: 429, operation: 'create session', resetAt: NOW + 400 });
    expect(retryDelay({ ...base, idempotent: false, error, attempt: 1, random: () => 0 })).toBe(400);
    // A reset already past: the backoff, never a retry back to back.
    const past = new RateLimitedError({ status: 429, operation: 'create session', resetAt: NOW - 1_000 });
    expect(retryDelay({ ...base, error: past, attempt: 1, random: () => 0 })).toBe(50);
  });

  it('does not wait for a 429 whose reset is beyond maxDelayMs', () => {
    const error = new RateLimitedError({ status: 429, operation: 'create session', resetAt: NOW + 1_001 });
    expect(retryDelay({ ...base, error, attempt: 1, random: () => 0 })).toBeUndefined();
  });

  it('reads a reset in epoch seconds or seconds from now, and a Retry-After on a 429 or a 503', () => {
    const at = (status: number, headers: Record<string, string>) =>
      httpErrorFromResponse({ status, operation: 'create session', headers: new Headers(headers) });
    const wait = (error: DurableChatError, idempotent = true) =>
      retryDelay({ ...base, idempotent, error, attempt: 1, random: () => 0 });
    expect(wait(at(429, { 'x-ratelimit-reset': String(NOW / 1000 + 1) }))).toBe(1_000);
    expect(wait(at(429, { 'retry-after': '1' }))).toBe(1_000);
    expect(wait(at(503, { 'retry-after': new Date(NOW + 1_000).toUTCString() }))).toBe(1_000);
    // Before, `resetAt - now` read these as long past: an immediate retry.
    expect(wait(at(503, { 'retry-after': '2' }))).toBeUndefined(); // beyond maxDelayMs (1 s here)
    // A 503 is still retried only when the request is idempotent, Retry-After or not.
    expect(wait(at(503, { 'retry-after': '1' }), false)).toBeUndefined();
  });

  it('never retries sooner than the backoff: Retry-After 0, negative, or a date already past', () => {
    const wide = { ...base, options: { retries: 3, minDelayMs: 250, maxDelayMs: 5_000 } };
    for (const value of ['0', '-5', new Date(NOW - 60_000).toUTCString()]) {
      const error = httpErrorFromResponse({
        status: 503,
        operation: 'create session',
        headers: new Headers({ 'retry-after': value }),
      });
      const delays = [1, 2, 3].map((attempt) => retryDelay({ ...wide, error, attempt, random: () => 0.5 }));
      // The same 503 without Retry-After waits 188, 375, 750 ms (random 0.5).
      expect(delays).toEqual([188, 375, 750]);
    }
  });

  it("reads a Retry-After date on the server's clock when the response's Date says ours is off", () => {
    const wide = { ...base, options: { retries: 3, minDelayMs: 250, maxDelayMs: 5_000 } };
    // The server's clock is 10 minutes behind ours; it says 3 s from its now.
    const serverNow = NOW - 600_000;
    const error = httpErrorFromResponse({
      status: 503,
      operation: 'create session',
      headers: new Headers({
        'retry-after': new Date(serverNow + 3_000).toUTCString(),
        date: new Date(serverNow).toUTCString(),
      }),
    });
    expect(retryDelay({ ...wide, error, attempt: 1, random: () => 0 })).toBe(3_000);
  });

  it('uses backoff for a 429 without a reset header', () => {
    const error = new RateLimitedError({ status: 429, operation: 'create session' });
    expect(retryDelay({ ...base, idempotent: false, error, attempt: 2, random: () => 0 })).toBe(100);
  });

  it('never retries auth failures, closed sessions or aborts', () => {
    const errors = [
      new AuthError({ status: 401, operation: 'create session' }),
      new ConnectionError({ code: 'ABORTED', message: 'stop' }),
    ];
    for (const error of errors) {
      expect(retryDelay({ ...base, error, attempt: 1, random: () => 0 })).toBeUndefined();
    }
  });

  it('has documented defaults', () => {
    expect(DEFAULT_RETRY_OPTIONS).toEqual({ retries: 3, minDelayMs: 250, maxDelayMs: 5_000 });
  });
});
