import { type DurableChatError, isDurableChatError } from '../errors/durable-chat-error.js';
import {
  AuthError,
  HttpError,
  httpErrorFromResponse,
  RateLimitedError,
  ServerError,
  SessionClosedError,
} from '../errors/http-error.js';
import { CLIENT_HEADER as HEADER } from '../protocol/headers.js';
import type { ClientContext } from './client-context.js';
import { sleep } from './environment.js';
import {
  abortedError,
  fetchWithTimeout,
  type HeadersOption,
  isAbortError,
  isTransientCallbackError,
  joinUrl,
  mergeHeaders,
  networkError,
  readJsonBody,
} from './http.js';
import { inspectNote, isInspected } from './inspection.js';
import { refusedFreshToken } from './refused-fresh-token.js';
import { backoffDelay, rateLimitDelay } from './retry-policy.js';

export interface AppendResult {
  /** The `.in` sequence number of the stored record, when the server reports one. */
  seq: number | undefined;
  attempts: number;
  durationMs: number;
}

const OPERATION = 'append to .in';

function readSeq(body: unknown): number | undefined {
  const seq = (body as { seq?: unknown } | null)?.seq;
  return typeof seq === 'number' && Number.isSafeInteger(seq) && seq >= 0 ? seq : undefined;
}

/**
 * Posts one serialised `.in` chunk under one `X-Part-Id`, reused on every retry so the
 * server stores it once. Network errors, 5xx and 429 are retried with backoff (429 waits
 * for `x-ratelimit-reset`); 401/403 refresh the token once and retry; 409 marks the chat
 * closed; 413 and other 4xx fail at once.
 */
export async function appendWithRetry(
  context: ClientContext,
  body: string,
  partId: string,
  signal: AbortSignal | undefined,
  headers?: HeadersOption,
  /** Called as each attempt goes out: from then on the message may be stored. */
  onAttempt?: () => void,
): Promise<AppendResult> {
  const { env, retry } = context;
  const started = env.now();
  let refreshedForAuth = false;
  let forceRefresh = false;
  let replaced = false;
  let attempt = 0;
  let attemptAbort: AbortController | undefined;
  let relayed: AbortSignal | undefined;
  const relay = () => attemptAbort?.abort(signal?.reason);
  for (;;) {
    attempt++;
    if (signal?.aborted) throw abortedError(OPERATION, signal.reason);
    let failure: DurableChatError;
    const generation = context.sessionGeneration();
    try {
      // The app's token endpoint failing for a moment (a 503 from its route, a timeout) is
      // one more failed attempt, whoever typed the error.
      const token = forceRefresh ? await context.tokens.refresh('unauthorized') : await context.tokens.get();
      forceRefresh = false;
      if (signal?.aborted) throw abortedError(OPERATION, signal.reason);
      onAttempt?.();
      // The attempt's own controller, relayed from `signal` only while the attempt is out: a
      // relay left on `signal` would keep the attempt's controller, its signal and the
      // request's abort wiring alive as long as the caller's signal (a turn's whole length).
      attemptAbort = new AbortController();
      if (signal !== undefined) {
        relayed = signal;
        signal.addEventListener('abort', relay, { once: true });
      }
      const response = await fetchWithTimeout(
        env,
        joinUrl(context.baseURL, `/realtime/v1/sessions/${context.sessionPath()}/in/append`),
        {
          method: 'POST',
          headers: mergeHeaders(context.headers, headers, {
            [HEADER.authorization]: `Bearer ${token}`,
            [HEADER.contentType]: 'application/json',
            [HEADER.partId]: partId,
            [HEADER.accept]: 'application/json',
          }),
          body,
          signal: attemptAbort.signal,
        },
        retry.appendTimeoutMs,
        OPERATION,
        attemptAbort,
        context.chatId,
      );
      // The body is bounded too: a 200 whose body stalls after the headers is still stored
      // (its seq is then unknown), never an answer the turn waits for forever.
      const parsed = await readJsonBody(response, env, retry.appendTimeoutMs);
      if (response.ok) return { seq: readSeq(parsed), attempts: attempt, durationMs: env.now() - started };
      failure = httpErrorFromResponse({
        status: response.status,
        operation: OPERATION,
        body: parsed,
        headers: response.headers,
      });
    } catch (error) {
      if (isAbortError(error, signal)) throw abortedError(OPERATION, error);
      if (isDurableChatError(error) && !isTransientCallbackError(error)) throw error;
      failure = isDurableChatError(error) ? error : networkError(OPERATION, error);
    } finally {
      relayed?.removeEventListener('abort', relay);
      relayed = undefined;
    }
    if (failure instanceof SessionClosedError) {
      context.markClosed(failure);
      throw failure;
    }
    // The server does not know the session (any more): get it again, then retry once, under
    // the same part id.
    if (failure instanceof HttpError && failure.code === 'NOT_FOUND' && !replaced) {
      replaced = true;
      // Unless another request of this chat replaced it while this attempt was out.
      if (context.sessionGeneration() === generation) await context.replaceSession();
      attempt--;
      continue;
    }
    if (failure instanceof AuthError) {
      if (refreshedForAuth) throw refusedFreshToken(failure, context.store.getState().token);
      refreshedForAuth = true;
      forceRefresh = true;
      attempt--; // an auth refresh is not a failed attempt of the send itself
      continue;
    }
    if (!failure.retryable || attempt >= retry.maxAttempts) throw failure;
    const delay =
      failure instanceof RateLimitedError || (failure instanceof ServerError && failure.resetAt !== undefined)
        ? rateLimitDelay(attempt, failure.resetAt, env.now(), retry, env.random(), failure.serverDate)
        : backoffDelay(attempt, retry, env.random());
    if (delay === undefined) throw failure;
    if (isInspected())
      inspectNote(
        context.chatId,
        { type: 'append-retrying', attempt, delayMs: delay, code: failure.code },
        env.now(),
      );
    try {
      await sleep(env, delay, signal);
    } catch (error) {
      throw abortedError(OPERATION, error);
    }
  }
}
