import type { HttpBindings } from '@hono/node-server';
import type { Context } from 'hono';
import { isDurableChatError } from '../../errors/durable-chat-error.js';
import { ValidationError } from '../../errors/validation-error.js';
import { MAX_STORED_RECORD_BYTES } from '../../protocol/limits.js';

/** Response headers a browser client must be able to read. */
export const EXPOSED_HEADERS = [
  'x-stream-version',
  'x-session-settled',
  'x-trigger-jwt',
  'x-trigger-jwt-claims',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
];

/** CORS headers for responses written straight to the socket (the `.out` stream). */
export const CORS_HEADERS: Record<string, string> = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': EXPOSED_HEADERS.join(', '),
};

export type ErrorStatus = 400 | 401 | 403 | 404 | 406 | 409 | 413 | 429 | 500 | 502 | 503 | 504;

/** Management endpoints' error body: `{ error, code }` (and `field` for bad input). */
export function errorResponse(
  c: Context,
  status: ErrorStatus,
  error: string,
  extra: Record<string, unknown> = {},
) {
  return c.json({ error, ...extra }, status);
}

/** `.in` append's error body: `{ ok: false, error }` plus the wire notes' machine code. */
export function appendError(
  c: Context,
  status: ErrorStatus,
  error: string,
  extra: Record<string, unknown> = {},
) {
  return c.json({ ok: false, error, ...extra }, status);
}

/** Bad input becomes 400 with the offending field; anything else is rethrown to the 500 handler. */
export function badRequestFrom(error: unknown): { error: string; field: string | undefined } {
  if (error instanceof ValidationError || (isDurableChatError(error) && error.code === 'INVALID_INPUT')) {
    return { error: error.message, field: (error as ValidationError).field };
  }
  throw error;
}

/** Reads a JSON body; an empty body is `undefined`, a broken one a `ValidationError`. */
export function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ValidationError({ field: 'body', message: 'body: not valid JSON' });
  }
}

/**
 * Cuts the connection without an answer. In-process (the fetch handler, no socket to cut)
 * an unreadable body is the closest.
 */
export function dropConnection(c: Context<{ Bindings: Partial<HttpBindings> }>): Response {
  const socket = c.env?.incoming?.socket;
  if (socket !== undefined) {
    socket.destroy();
    return new Response(null, { headers: { 'x-hono-already-sent': 'true' } });
  }
  return new Response(
    new ReadableStream({
      start(controller) {
        controller.error(new TypeError('connection lost (injected fault)'));
      },
    }),
  );
}

/** Create, close and the admin endpoint take no body larger than a stored record (1 MiB). */
export const MAX_REQUEST_BODY_BYTES = MAX_STORED_RECORD_BYTES;

export function bodyTooLarge(c: Context) {
  return errorResponse(c, 413, `the body is over ${MAX_REQUEST_BODY_BYTES} bytes, the limit`, {
    code: 'PAYLOAD_TOO_LARGE',
  });
}
