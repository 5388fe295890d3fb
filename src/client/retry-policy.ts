/**
 * Retry and reconnect timing, as pure functions: no timers, no clock, no randomness of
 * their own (the caller passes `now` and a `random()` in [0, 1)). Tests check the delays
 * without sleeping.
 */

/** How appends retry and how `.out` reads reconnect. Every field is optional. */
export interface RetryOptions {
  /** Attempts for one logical append, the first one included. Default 6. */
  maxAttempts?: number;
  /**
   * Consecutive `.out` reconnects without a new record before a live read gives up with
   * `STREAM_DISCONNECTED`. Any new record resets the count. Default 8.
   */
  maxReconnectAttempts?: number;
  /** Upper bound of the first retry's delay; the first retry is meant to be fast. Default 25 ms. */
  firstRetryDelayMs?: number;
  /** Base of the exponential part, used from the second retry on. Default 250 ms. */
  initialDelayMs?: number;
  /** Growth factor per retry. Default 2. */
  factor?: number;
  /** Ceiling of one backoff delay. Default 10 000 ms. */
  maxDelayMs?: number;
  /** Longest wait a 429's `x-ratelimit-reset` may impose before the attempt fails. Default 60 000 ms. */
  maxRateLimitWaitMs?: number;
  /**
   * A live `.out` connection that delivers no byte (not even a ping) for this long is
   * treated as dropped. Keep it well above the server's ping interval (about 5 s). Default 15 000 ms.
   */
  stallTimeoutMs?: number;
}

export type ResolvedRetryOptions = Required<RetryOptions>;

export const DEFAULT_RETRY_OPTIONS: ResolvedRetryOptions = {
  maxAttempts: 6,
  maxReconnectAttempts: 8,
  firstRetryDelayMs: 25,
  initialDelayMs: 250,
  factor: 2,
  maxDelayMs: 10_000,
  maxRateLimitWaitMs: 60_000,
  stallTimeoutMs: 15_000,
};

export function resolveRetryOptions(options: RetryOptions | undefined): ResolvedRetryOptions {
  const resolved = { ...DEFAULT_RETRY_OPTIONS };
  if (options === undefined) return resolved;
  for (const key of Object.keys(resolved) as (keyof ResolvedRetryOptions)[]) {
    const value = options[key];
    if (typeof value === 'number' && Number.isFinite(value) && value >= 0) resolved[key] = value;
  }
  resolved.maxAttempts = Math.max(1, Math.floor(resolved.maxAttempts));
  resolved.factor = Math.max(1, resolved.factor);
  return resolved;
}

/**
 * Delay before retry number `retry` (1 = the first retry). The first retry waits a random
 * time up to `firstRetryDelayMs` so a healed drop costs almost nothing; later ones grow
 * exponentially with "equal jitter" (half fixed, half random) so a fleet of clients that
 * lost the same server does not come back in lockstep.
 */
export function backoffDelay(retry: number, options: ResolvedRetryOptions, random: number): number {
  if (retry <= 1) return Math.floor(random * options.firstRetryDelayMs);
  const exponential = options.initialDelayMs * options.factor ** (retry - 2);
  const capped = Math.min(options.maxDelayMs, exponential);
  return Math.floor(capped / 2 + (random * capped) / 2);
}

/**
 * Delay before retrying after a 429. With `x-ratelimit-reset` (epoch ms) the wait runs to
 * the reset plus a little jitter; without it, the ordinary backoff. Returns `undefined`
 * when the reset is further away than `maxRateLimitWaitMs` (give up instead of hanging).
 */
export function rateLimitDelay(
  retry: number,
  resetAt: number | undefined,
  now: number,
  options: ResolvedRetryOptions,
  random: number,
): number | undefined {
  if (resetAt === undefined) return Math.max(backoffDelay(retry, options, random), options.initialDelayMs);
  const wait = Math.max(0, resetAt - now);
  if (wait > options.maxRateLimitWaitMs) return undefined;
  return wait + Math.floor(random * options.firstRetryDelayMs);
}
