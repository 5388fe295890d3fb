import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  backoffDelay,
  DEFAULT_RETRY_OPTIONS,
  normalizeResetAt,
  rateLimitDelay,
  resolveRetryOptions,
} from '../../src/client/retry-policy.js';

const options = resolveRetryOptions(undefined);

describe('backoffDelay', () => {
  it('keeps the first retry fast: at most firstRetryDelayMs', () => {
    expect(backoffDelay(1, options, 0)).toBe(0);
    expect(backoffDelay(1, options, 0.999)).toBeLessThanOrEqual(options.firstRetryDelayMs);
  });

  it('grows exponentially from the second retry, with half of it random', () => {
    expect(backoffDelay(2, options, 0)).toBe(125);
    expect(backoffDelay(2, options, 0.999)).toBe(249);
    expect(backoffDelay(3, options, 0)).toBe(250);
    expect(backoffDelay(4, options, 0)).toBe(500);
  });

  it('never exceeds maxDelayMs and never goes below half of the capped value', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 60 }),
        fc.double({ min: 0, max: 0.9999, noNaN: true }),
        (retry, random) => {
          const delay = backoffDelay(retry, options, random);
          const capped = Math.min(options.maxDelayMs, options.initialDelayMs * options.factor ** (retry - 2));
          return delay <= options.maxDelayMs && delay >= Math.floor(capped / 2);
        },
      ),
    );
  });

  it('spreads clients that retry at the same moment (jitter)', () => {
    const delays = new Set([0.1, 0.3, 0.5, 0.7, 0.9].map((random) => backoffDelay(5, options, random)));
    expect(delays.size).toBe(5);
  });
});

describe('rateLimitDelay', () => {
  const NOW = 1_763_000_000_000; // epoch ms, as a real clock reads

  it('waits until x-ratelimit-reset (epoch ms) plus a small jitter', () => {
    expect(rateLimitDelay(1, NOW + 700, NOW, options, 0)).toBe(700);
    expect(rateLimitDelay(1, NOW + 700, NOW, options, 0.99)).toBeLessThanOrEqual(
      700 + options.firstRetryDelayMs,
    );
  });

  it('a reset already past on this clock still waits the backoff of that retry (a floor), never at once', () => {
    expect(rateLimitDelay(3, NOW - 5_000, NOW, options, 0)).toBe(backoffDelay(3, options, 0));
    expect(rateLimitDelay(3, NOW - 5_000, NOW, options, 0)).toBeGreaterThan(0);
  });

  it('reads the reset against the server’s Date when this clock is far off', () => {
    const serverNow = NOW - 3_600_000; // this clock is an hour fast
    expect(rateLimitDelay(1, serverNow + 30_000, NOW, options, 0, serverNow)).toBe(30_000);
    // Within the Date header's resolution the local clock is kept.
    expect(rateLimitDelay(1, NOW + 700, NOW, options, 0, NOW - 1_000)).toBe(700);
  });

  it('a reset in epoch seconds or in seconds from now still waits (retries are not made immediate)', () => {
    expect(normalizeResetAt(NOW / 1000 + 30, NOW)).toBe(NOW + 30_000);
    expect(normalizeResetAt(30, NOW)).toBe(NOW + 30_000);
    expect(rateLimitDelay(1, NOW / 1000 + 30, NOW, options, 0)).toBe(30_000);
    expect(rateLimitDelay(1, 12, NOW, options, 0)).toBe(12_000);
    expect(rateLimitDelay(1, 120, NOW, options, 0)).toBeUndefined(); // beyond maxRateLimitWaitMs
  });

  it('gives up (undefined) when the reset is further away than maxRateLimitWaitMs', () => {
    expect(rateLimitDelay(1, NOW + options.maxRateLimitWaitMs + 1, NOW, options, 0)).toBeUndefined();
  });

  it('falls back to backoff, never below initialDelayMs, without a reset header', () => {
    expect(rateLimitDelay(1, undefined, 0, options, 0)).toBe(options.initialDelayMs);
    expect(rateLimitDelay(6, undefined, 0, options, 0)).toBe(backoffDelay(6, options, 0));
  });
});

describe('resolveRetryOptions', () => {
  it('fills defaults and keeps valid overrides', () => {
    expect(resolveRetryOptions({ maxAttempts: 3 })).toEqual({ ...DEFAULT_RETRY_OPTIONS, maxAttempts: 3 });
  });

  it('ignores invalid values and clamps maxAttempts to at least 1', () => {
    const resolved = resolveRetryOptions({ maxAttempts: 0, initialDelayMs: -5, maxDelayMs: Number.NaN });
    expect(resolved.maxAttempts).toBe(1);
    expect(resolved.initialDelayMs).toBe(DEFAULT_RETRY_OPTIONS.initialDelayMs);
    expect(resolved.maxDelayMs).toBe(DEFAULT_RETRY_OPTIONS.maxDelayMs);
  });
});
