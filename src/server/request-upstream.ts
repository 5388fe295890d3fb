import { ConnectionError } from '../errors/connection-error.js';
import { isDurableChatError } from '../errors/durable-chat-error.js';
import { httpErrorFromResponse } from '../errors/http-error.js';
import { ProtocolError } from '../errors/protocol-error.js';
import { deadlineSignal } from './deadline-signal.js';
import { redactParsed, redactSecret } from './redact-secret.js';
import { type ResolvedRetryOptions, retryDelay } from './retry-delay.js';

export interface UpstreamContext {
  baseURL: string;
  secretKey: string;
  fetch: typeof fetch | undefined;
  retry: ResolvedRetryOptions;
  timeoutMs: number;
}

export interface UpstreamCall {
  path: string;
  body: unknown;
  /** Used in error messages: what was being done, never a URL or a credential. */
  operation: string;
  idempotent: boolean;
  signal?: AbortSignal;
  /** More request headers (an `X-Part-Id`); never `Authorization`. */
  headers?: Record<string, string>;
}

export interface UpstreamResult {
  status: number;
  body: unknown;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function parseJson(
  text: string,
  secret: string,
): { ok: true; value: unknown } | { ok: false; cause: unknown } {
  if (text === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: redactParsed(JSON.parse(text), secret) };
  } catch (cause) {
    return { ok: false, cause };
  }
}

async function attempt(context: UpstreamContext, call: UpstreamCall): Promise<UpstreamResult> {
  const fetchImpl = context.fetch ?? globalThis.fetch;
  const deadline = deadlineSignal(context.timeoutMs, call.signal);
  const aborted = (cause: unknown) =>
    new ConnectionError({ code: 'ABORTED', message: `${call.operation}: aborted by the caller`, cause });
  const failed = (what: string, cause: unknown) =>
    new ConnectionError({ code: 'NETWORK_ERROR', message: `${call.operation}: ${what}`, cause });
  let text: string;
  let response: Response;
  try {
    response = await fetchImpl(`${context.baseURL}${call.path}`, {
      method: 'POST',
      headers: {
        ...call.headers,
        authorization: `Bearer ${context.secretKey}`,
        'content-type': 'application/json',
        accept: 'application/json',
      },
      body: JSON.stringify(call.body ?? {}),
      signal: deadline.signal,
    });
    text = await response.text();
  } catch (cause) {
    if (call.signal?.aborted) throw aborted(cause);
    throw failed(
      deadline.timedOut ? `no answer within ${context.timeoutMs} ms` : 'the request failed',
      cause,
    );
  } finally {
    deadline.dispose();
  }
  const parsed = parseJson(redactSecret(text, context.secretKey), context.secretKey);
  if (!response.ok) {
    const body = parsed.ok ? parsed.value : undefined;
    throw httpErrorFromResponse({
      status: response.status,
      operation: call.operation,
      body,
      headers: response.headers,
    });
  }
  if (!parsed.ok) {
    throw new ProtocolError({
      code: 'UNEXPECTED_RESPONSE',
      message: `${call.operation}: the service answered ${response.status} with a body that is not JSON`,
      cause: parsed.cause,
    });
  }
  return { status: response.status, body: parsed.value };
}

/**
 * One POST to the session service with the secret key, retried per `retryDelay`. Throws
 * typed errors only; none of their messages carries the key.
 */
export async function requestUpstream(context: UpstreamContext, call: UpstreamCall): Promise<UpstreamResult> {
  for (let retry = 1; ; retry++) {
    try {
      return await attempt(context, call);
    } catch (error) {
      if (!isDurableChatError(error)) throw error;
      const delay = retryDelay({
        error,
        attempt: retry,
        idempotent: call.idempotent,
        options: context.retry,
        now: Date.now(),
        random: Math.random,
      });
      if (delay === undefined) throw error;
      try {
        await sleep(delay, call.signal);
      } catch (cause) {
        throw new ConnectionError({
          code: 'ABORTED',
          message: `${call.operation}: aborted while waiting to retry`,
          cause,
        });
      }
    }
  }
}
