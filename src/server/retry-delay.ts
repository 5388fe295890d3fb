import { untilReset } from '../client/retry-policy.js';
import type { DurableChatError } from '../errors/durable-chat-error.js';
import { RateLimitedError, ServerError } from '../errors/http-error.js';

export interface RetryOptions {
  /** Retries after the first attempt. Default 3; 0 turns retrying off. */
  retries?: number;
  /** First backoff delay in ms, doubled on each retry (half of it jittered). Default 250. */
  minDelayMs?: number;
  /**
   * Longest single wait in ms. Default 5000. A 429 whose `x-ratelimit-reset` is further
   * away than this is not waited for: the `RateLimitedError` is thrown at once, so a request
   * handler never hangs on a long rate-limit window.
   */
  maxDelayMs?: number;
}

export type ResolvedRetryOptions = Required<RetryOptions>;

export const DEFAULT_RETRY_OPTIONS: ResolvedRetryOptions = { retries: 3, minDelayMs: 250, maxDelayMs: 5_000 };

export function resolveRetryOptions(options: RetryOptions | undefined): ResolvedRetryOptions {
  return { ...DEFAULT_RETRY_OPTIONS, ...options };
}

export interface RetryDecisionInput {
  error: DurableChatError;
  /** 1 for the first retry. */
  attempt: number;
  /**
   * Whether repeating the request cannot do the work twice. A 429 is retried either way,
   * since the service did nothing; a 5xx or a dropped connection only when idempotent.
   */
  idempotent: boolean;
  options: ResolvedRetryOptions;
  now: number;
  random: () => number;
}

/** Milliseconds to wait before the next attempt, or undefined to give up. Pure. */
export function retryDelay(input: RetryDecisionInput): number | undefined {
  const { error, attempt, idempotent, options } = input;
  if (attempt > options.retries) return undefined;
  const rateLimited = error.code === 'RATE_LIMITED';
  const transient = error.code === 'SERVER_ERROR' || error.code === 'NETWORK_ERROR';
  if (!rateLimited && !(transient && idempotent)) return undefined;
  const ceiling = Math.min(options.maxDelayMs, options.minDelayMs * 2 ** (attempt - 1));
  const backoff = Math.round(ceiling / 2 + input.random() * (ceiling / 2));
  // The service's reset, or a 503's Retry-After (epoch ms, epoch seconds or seconds from now), on
  // the server's clock when the response's Date says ours is off; never sooner than the backoff
  // (a `Retry-After: 0` or a reset already past must not retry back to back).
  if ((error instanceof RateLimitedError || error instanceof ServerError) && error.resetAt !== undefined) {
    const wait = untilReset(error.resetAt, input.now, error.serverDate);
    return wait > options.maxDelayMs ? undefined : Math.max(backoff, wait);
  }
  return backoff;
}
