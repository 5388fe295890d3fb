/**
 * Retry and reconnect timing, as pure functions: no timers, no clock, no randomness of
 * their own (the caller passes `now` and a `random()` in [0, 1)). Tests check the delays
 * without sleeping.
 */

/** How appends retry and how `.out` reads reconnect. Every field is optional. */
export interface RetryOptions {
  /** Attempts for one logical append, or for the session's start, the first one included. Default 6. */
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
  /**
   * One append attempt with no response headers after this long is abandoned and retried
   * under the same `X-Part-Id` (a half-open connection). Default 20 000 ms.
   */
  appendTimeoutMs?: number;
  /** A `.out` connection with no response headers after this long is retried. Default 20 000 ms. */
  connectTimeoutMs?: number;
  /**
   * The app's `startSession` / `getAccessToken` not settling within this long counts as a
   * failed attempt (`TOKEN_UNAVAILABLE`, retried like a network error). Default 30 000 ms.
   */
  callbackTimeoutMs?: number;
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
  appendTimeoutMs: 20_000,
  connectTimeoutMs: 20_000,
  callbackTimeoutMs: 30_000,
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
 * `x-ratelimit-reset` as epoch ms. The wire notes say epoch milliseconds, but servers also
 * send epoch seconds or seconds from now; read literally, either would look long past and
 * make every retry immediate. Values below 1e11 (before 1973 in ms) are seconds: epoch
 * seconds when above 1e9, else a delay from `now`.
 */
export function normalizeResetAt(resetAt: number, now: number): number {
  if (resetAt >= 1e11) return resetAt;
  if (resetAt >= 1e9) return resetAt * 1000;
  return now + Math.max(0, resetAt) * 1000;
}

/** Clocks this far apart are told apart from a `Date` header's one-second resolution. */
const CLOCK_SKEW_SIGNIFICANT_MS = 2_000;

/**
 * Ms from `now` to a reset (`x-ratelimit-reset` or `Retry-After`, any form `normalizeResetAt`
 * reads), on the server's clock when its `Date` (`serverDate`) says ours is off; never negative.
 */
export function untilReset(resetAt: number, now: number, serverDate?: number): number {
  const serverNow =
    serverDate !== undefined && Math.abs(serverDate - now) > CLOCK_SKEW_SIGNIFICANT_MS ? serverDate : now;
  return Math.max(0, normalizeResetAt(resetAt, serverNow) - serverNow);
}

/**
 * Delay before retrying after a 429. With `x-ratelimit-reset` (epoch ms) the wait runs to
 * the reset plus a little jitter; without it, the ordinary backoff. Never shorter than the
 * backoff of that retry: a reset already past on this clock is never retried back to back.
 * `serverDate` (the response's `Date`) corrects a local clock that is minutes off. Returns
 * `undefined` when the reset is further away than `maxRateLimitWaitMs` (give up instead of
 * hanging).
 */
export function rateLimitDelay(
  retry: number,
  resetAt: number | undefined,
  now: number,
  options: ResolvedRetryOptions,
  random: number,
  serverDate?: number,
): number | undefined {
  const floor = backoffDelay(retry, options, random);
  if (resetAt === undefined) return Math.max(floor, options.initialDelayMs);
  const wait = untilReset(resetAt, now, serverDate);
  if (wait > options.maxRateLimitWaitMs) return undefined;
  return Math.max(floor, wait + Math.floor(random * options.firstRetryDelayMs));
}
