import { ConnectionError } from '../errors/connection-error.js';

/** Extra headers: a fixed set, or a function called per request (for rotating values). */
export type HeadersOption = Record<string, string> | Headers | (() => Record<string, string> | Headers);

/** Merges header sources left to right; later ones win. */
export function mergeHeaders(...sources: (HeadersOption | undefined)[]): Headers {
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

/** Reads a body as JSON, or `undefined` when it is empty or not JSON (error bodies vary). */
export async function readJsonBody(response: Response): Promise<unknown> {
  let text: string;
  try {
    text = await response.text();
  } catch {
    // The body broke off; the status alone decides what happens next.
    return undefined;
  }
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
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

export function joinUrl(baseURL: string, path: string): string {
  return baseURL.replace(/\/+$/, '') + path;
}
