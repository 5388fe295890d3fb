import { ConnectionError } from '../errors/connection-error.js';
import type { DurableChatError } from '../errors/durable-chat-error.js';
import { ValidationError } from '../errors/validation-error.js';
import { type ClientEnvironment, listenForAbort } from './environment.js';
import { inspectFetch, isInspected } from './inspection.js';

/** Extra headers: a fixed set, or a function called per request (for rotating values). */
export type HeadersOption = Record<string, string> | Headers | (() => Record<string, string> | Headers);

/**
 * Merges header sources left to right; later ones win. With the library's own headers alone
 * (a plain record, the default) that record is the result: fetch reads it as is, and each
 * request of every chat saves the two `Headers` objects (each with its own map) a merge costs.
 */
export function mergeHeaders(...sources: (HeadersOption | undefined)[]): HeadersInit {
  let only: HeadersOption | undefined;
  let count = 0;
  for (const source of sources) {
    if (source === undefined) continue;
    only = source;
    count++;
  }
  if (count === 1 && isPlainRecord(only)) return only;
  const merged = new Headers();
  for (const source of sources) {
    if (source === undefined) continue;
    const resolved = typeof source === 'function' ? source() : source;
    new Headers(resolved).forEach((value, key) => {
      merged.set(key, value);
    });
  }
  return merged;
}

function isPlainRecord(value: HeadersOption | undefined): value is Record<string, string> {
  return typeof value === 'object' && !(value instanceof Headers);
}

/**
 * Reads a body as JSON, or `undefined` when it is empty, not JSON, broke off, or did not
 * end within `timeoutMs` (then it is cancelled): error bodies vary, and the status alone
 * decides what happens next.
 */
export async function readJsonBody(
  response: Response,
  env?: Pick<ClientEnvironment, 'setTimeout' | 'clearTimeout'>,
  timeoutMs?: number,
): Promise<unknown> {
  let text: string | undefined;
  let timer: unknown;
  try {
    const reading = response.text();
    if (env === undefined || timeoutMs === undefined) text = await reading;
    else {
      const timedOut = new Promise<undefined>((resolve) => {
        timer = env.setTimeout(() => resolve(undefined), timeoutMs);
      });
      text = await Promise.race([reading, timedOut]);
      if (text === undefined) {
        reading.catch(() => undefined);
        response.body?.cancel().catch(() => undefined);
      }
    }
  } catch {
    return undefined;
  } finally {
    if (timer !== undefined) env?.clearTimeout(timer);
  }
  if (text === undefined || text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * An error from the app's `startSession` / `getAccessToken` (or a request) that one more
 * attempt can cure: whatever typed it (a route client's `SERVER_ERROR` for a 503, a rate
 * limit, a timeout, a network error). A refusal (401/403 from the app's route), a closed
 * session or a bad request is not.
 */
export function isTransientCallbackError(error: DurableChatError): boolean {
  if (!error.retryable) return false;
  return error.code !== 'UNAUTHORIZED' && error.code !== 'FORBIDDEN' && error.code !== 'TURN_IN_OTHER_TAB';
}

export function isAbortError(error: unknown, signal?: AbortSignal): boolean {
  if (signal?.aborted) return true;
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'AbortError';
}

/** A fetch that rejected (DNS, reset, offline) as a typed, retryable error. */
export function networkError(operation: string, cause: unknown): ConnectionError {
  return new ConnectionError({
    code: 'NETWORK_ERROR',
    message: `${operation}: network request failed`,
    cause,
  });
}

export function abortedError(operation: string, cause?: unknown): ConnectionError {
  return new ConnectionError({ code: 'ABORTED', message: `${operation} was aborted`, cause });
}

/**
 * `baseURL` as given, once it is a non-empty string: an unset environment variable reads as
 * `undefined`, and every request would then fail as a network error that names nothing.
 */
export function requireBaseURL(baseURL: unknown): string {
  if (typeof baseURL === 'string' && baseURL.trim() !== '') return baseURL;
  throw new ValidationError({
    message:
      `baseURL is ${baseURL === '' ? 'empty' : String(baseURL)}: pass the API's origin, e.g. ` +
      "'http://localhost:3030' for `durable-chat dev` (is the environment variable that holds it set in this build?)",
    field: 'baseURL',
  });
}

export function joinUrl(baseURL: string, path: string): string {
  return baseURL.replace(/\/+$/, '') + path;
}

/** The error a per-attempt timeout reports: retryable, like any lost connection. */
export function timeoutError(operation: string, ms: number): ConnectionError {
  return new ConnectionError({
    code: 'NETWORK_ERROR',
    message: `${operation}: no response within ${ms} ms (timed out)`,
  });
}

/**
 * `fetch` that gives up when no response headers arrive within `timeoutMs` (a half-open
 * connection never errors by itself). The caller's `signal` still aborts it; once the
 * headers are in, the timer is gone and the body reads at its own pace.
 *
 * `owned`: a controller the caller made for this request alone (`init.signal` is its
 * signal). The timeout aborts it directly instead of chaining a second controller to it: a
 * long-lived `.out` connection then holds one controller, not two, for as long as it reads.
 */
export function fetchWithTimeout(
  env: ClientEnvironment,
  url: string,
  init: RequestInit,
  timeoutMs: number,
  operation: string,
  owned?: AbortController,
  /** The chat this request serves: an attached inspector sees the request under it. */
  chatId?: string,
): Promise<Response> {
  const outer = owned === undefined ? (init.signal ?? undefined) : undefined;
  let controller = owned;
  if (controller === undefined) {
    const chained = new AbortController();
    controller = chained;
    listenForAbort(outer, () => chained.abort(outer?.reason));
  }
  const target = controller;
  let timedOut = false;
  const timer = env.setTimeout(() => {
    timedOut = !target.signal.aborted;
    target.abort();
  }, timeoutMs);
  // Chained rather than `async`: no suspended frame per request in flight.
  let pending: Promise<Response>;
  try {
    const sent = { ...init, signal: target.signal };
    pending =
      chatId === undefined || !isInspected()
        ? env.fetch(url, sent)
        : inspectFetch({ chatId, url, init: sent }, () => env.fetch(url, sent));
  } catch (error) {
    env.clearTimeout(timer);
    return Promise.reject(error);
  }
  return pending.then(
    (response) => {
      // The outer signal keeps aborting the body after the headers came in (stalls, stop).
      env.clearTimeout(timer);
      return response;
    },
    (error: unknown) => {
      env.clearTimeout(timer);
      throw timedOut && outer?.aborted !== true ? timeoutError(operation, timeoutMs) : error;
    },
  );
}

/**
 * Races the app's callback against `timeoutMs`: a callback that never settles fails with
 * `TOKEN_UNAVAILABLE` (retryable) instead of leaving a send pending forever.
 */
export function callbackWithTimeout<T>(
  env: ClientEnvironment,
  run: () => Promise<T>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = env.setTimeout(() => {
      reject(
        new ConnectionError({
          code: 'TOKEN_UNAVAILABLE',
          message: `the app's ${what} did not answer within ${timeoutMs} ms`,
        }),
      );
    }, timeoutMs);
    let pending: Promise<T>;
    try {
      pending = run();
    } catch (error) {
      env.clearTimeout(timer);
      reject(error);
      return;
    }
    pending.then(
      (value) => {
        env.clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        env.clearTimeout(timer);
        reject(error);
      },
    );
  });
}
