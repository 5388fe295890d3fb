import { isDurableChatError } from '../errors/durable-chat-error.js';
import { RateLimitedError, SessionClosedError } from '../errors/http-error.js';
import type { ChatRouteErrorBody } from '../route-client/route-protocol.js';

/** Stable `code`s of the route's error bodies. */
export type ChatRouteErrorCode =
  | 'INVALID_INPUT'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'SESSION_CLOSED'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'RATE_LIMITED'
  | 'INTERNAL_ERROR'
  | 'AUTHORIZE_TIMEOUT'
  | 'UPSTREAM_ERROR'
  | 'SECRET_KEY_REJECTED'
  | 'TASK_NOT_FOUND'
  | 'INVALID_CONFIG'
  | 'TASK_MISMATCH';

// Tokens travel in these bodies: no cache may keep them.
const BASE_HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-store' } as const;

export function jsonResponse(body: unknown, status = 200, headers?: Record<string, string>): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...BASE_HEADERS, ...headers } });
}

export function errorResponse(
  status: number,
  code: ChatRouteErrorCode,
  error: string,
  headers?: Record<string, string>,
  extra: Pick<ChatRouteErrorBody, 'closedReason'> = {},
): Response {
  const body: ChatRouteErrorBody = { error, code, ...extra };
  return jsonResponse(body, status, headers);
}

export interface MappedFailure {
  response: Response;
  /** True when the failure is the server's (upstream or app code), worth reporting. */
  serverSide: boolean;
}

/**
 * Maps a failure after the browser's input was accepted. Only fixed texts reach the
 * browser: upstream messages may name internals, so they stay on the server.
 */
export function mapUpstreamFailure(error: unknown): MappedFailure {
  if (!isDurableChatError(error)) {
    return { response: errorResponse(500, 'INTERNAL_ERROR', 'the chat route failed'), serverSide: true };
  }
  switch (error.code) {
    case 'SESSION_CLOSED': {
      // The app's own close reason: the browser may show it ("archived by you").
      const closedReason = error instanceof SessionClosedError ? error.closedReason : null;
      const response = errorResponse(409, 'SESSION_CLOSED', 'the session is closed', undefined, {
        closedReason,
      });
      return { response, serverSide: false };
    }
    case 'NOT_FOUND':
      return { response: errorResponse(404, 'NOT_FOUND', 'no session for this chat'), serverSide: false };
    case 'RATE_LIMITED': {
      const resetAt = error instanceof RateLimitedError ? error.resetAt : undefined;
      const headers = resetAt === undefined ? undefined : { 'x-ratelimit-reset': String(resetAt) };
      const response = errorResponse(
        429,
        'RATE_LIMITED',
        'the session service is busy; retry later',
        headers,
      );
      return { response, serverSide: true };
    }
    case 'SECRET_KEY_REJECTED':
    case 'TASK_NOT_FOUND':
    case 'INVALID_CONFIG': {
      // The operator's to fix, not the browser's: the full story (service URL, task id, the
      // fix) goes to the server log; the browser gets the code and where to look.
      const what =
        error.code === 'INVALID_CONFIG'
          ? 'the chat route is not set up'
          : `the session service rejected ${error.code === 'SECRET_KEY_REJECTED' ? "this route's secret key" : "this route's task id"}`;
      const response = errorResponse(500, error.code, `${what}; the server's log says how to fix it`);
      return { response, serverSide: true };
    }
    case 'TASK_MISMATCH':
      // The app's own code disagrees with itself: the browser may show the fix, and the log has it.
      return { response: errorResponse(400, 'TASK_MISMATCH', error.message), serverSide: true };
    case 'INVALID_INPUT':
    case 'PAYLOAD_TOO_LARGE':
      // The browser's input was checked before, so this came from the app's createOptions.
      return { response: errorResponse(500, 'INTERNAL_ERROR', 'the chat route failed'), serverSide: true };
    default:
      return {
        response: errorResponse(502, 'UPSTREAM_ERROR', 'the session service failed; retry later'),
        serverSide: true,
      };
  }
}
