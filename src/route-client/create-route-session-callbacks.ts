import type { StartSessionResult } from '../client/session-client.js';
import { ConfigurationError } from '../errors/configuration-error.js';
import { ConnectionError } from '../errors/connection-error.js';
import {
  AuthError,
  describeHttpFailure,
  type HttpError,
  httpErrorFromResponse,
} from '../errors/http-error.js';
import { ProtocolError } from '../errors/protocol-error.js';
import { validateCloseReason } from '../protocol/validate.js';
import { type ChatRouteRequest, validateChatId } from './route-protocol.js';

export interface RouteSessionCallbacksOptions {
  /** URL of the app's route handler, e.g. `/api/chat-session`. */
  endpoint: string | URL;
  /** Extra request headers (a CSRF token, an auth header); a function is called per request. */
  headers?: HeadersInit | (() => HeadersInit | Promise<HeadersInit>);
  /** Defaults to `globalThis.fetch`, read at call time. */
  fetch?: typeof fetch;
  /** Defaults to `same-origin`, so the app's cookies reach its own route. */
  credentials?: RequestCredentials;
}

export interface RouteSessionCallbacks {
  /**
   * Creates (or returns) the chat's session. The task identifier is the server's choice:
   * leave it out. Given, it is sent only to be checked, and a route serving another task
   * refuses with `ConfigurationError` `TASK_MISMATCH`. `currentRunId` is the session row's (`null`: no live run), `undefined` when the
   * route did not say. `isCached` is `false` when this call created the session (`undefined`
   * when the route did not say). A closed session throws `SessionClosedError` (`SESSION_CLOSED`).
   */
  startSession(params: {
    chatId: string;
    taskIdentifier?: string;
    clientData?: unknown;
  }): Promise<StartSessionResult>;
  /** A fresh 60-minute session token. */
  getAccessToken(params: { chatId: string }): Promise<string>;
  /** Closes the session for good. Closing a closed session succeeds. */
  closeSession(params: { chatId: string; reason?: string }): Promise<void>;
  /**
   * A read-only token for following the chat (the route's `watch` action): it reads `.out`
   * and cannot append. The `getAccessToken` of a `SessionFollower` (`watchSession`).
   */
  getWatchToken(params: { chatId: string }): Promise<string>;
}

/** `currentRunId` as the route sent it: absent stays `undefined`, never a guessed `null`. */
function readCurrentRunId(body: unknown): string | null | undefined {
  const record = body as Record<string, unknown> | null;
  if (record === null || !('currentRunId' in record)) return undefined;
  const value = record.currentRunId;
  if (value === null || (typeof value === 'string' && value !== '')) return value;
  if (value === undefined) return undefined;
  throw new ProtocolError({
    code: 'UNEXPECTED_RESPONSE',
    message: 'chat route start: "currentRunId" is neither a run id nor null',
  });
}

/** `isCached` as the route sent it: absent stays `undefined` (the transport then reads `.out` first). */
function readIsCached(body: unknown): boolean | undefined {
  const record = body as Record<string, unknown> | null;
  const value = record === null ? undefined : record.isCached;
  if (value === undefined || typeof value === 'boolean') return value;
  throw new ProtocolError({
    code: 'UNEXPECTED_RESPONSE',
    message: 'chat route start: "isCached" is not a boolean',
  });
}

function readString(body: unknown, key: string, operation: string): string {
  const value = (body as Record<string, unknown> | null)?.[key];
  if (typeof value !== 'string' || value === '') {
    throw new ProtocolError({
      code: 'UNEXPECTED_RESPONSE',
      message: `${operation}: the route answered without a "${key}" string`,
    });
  }
  return value;
}

/**
 * The endpoint as fetch will take it. A relative one needs a page to resolve against; outside
 * a browser (server rendering, Node, a test) fetch would fail with a bare "invalid URL"
 * that reads like a network error and gets retried, so it is refused here with the fix.
 */
function resolvableEndpoint(endpoint: string | URL, operation: string): string | URL {
  if (typeof endpoint !== 'string' || /^[a-z][a-z0-9+.-]*:/i.test(endpoint)) return endpoint;
  const page = (globalThis as { location?: { href?: unknown } }).location?.href;
  if (typeof page === 'string' && page !== '') return endpoint;
  throw new ConfigurationError({
    code: 'INVALID_CONFIG',
    field: 'endpoint',
    message:
      `${operation}: endpoint "${endpoint}" is relative, and outside a browser page there is nothing to ` +
      'resolve it against. Pass an absolute URL, or create the callbacks only in the browser.',
  });
}

/**
 * The route's own configuration codes keep their code, and their answer: retrying cannot help.
 * So does the route's `authorize` refusal (403 `FORBIDDEN`): unlike a 403 from the session
 * service (a token short of a scope, healed by a fresh token), asking again gets the same answer.
 */
function errorFromRoute(error: HttpError, operation: string): ConfigurationError | HttpError {
  const { status, serverCode: code, serverMessage } = error;
  if (
    code === 'SECRET_KEY_REJECTED' ||
    code === 'TASK_NOT_FOUND' ||
    code === 'INVALID_CONFIG' ||
    code === 'TASK_MISMATCH'
  )
    return new ConfigurationError({
      code,
      status,
      message: describeHttpFailure({ operation, status, serverMessage }, code),
    });
  if (status === 403 && code === 'FORBIDDEN')
    return new AuthError({ status, operation, retryable: false, serverMessage, serverCode: code });
  return error;
}

/**
 * The browser side of `createChatRouteHandler`: the `startSession` / `getAccessToken`
 * callbacks `SessionChatTransport` takes, over one POST endpoint of the app. Failures are
 * typed: `ConnectionError` (`NETWORK_ERROR`), `HttpError` subclasses by status (the route's
 * `code` as `serverCode`), `ConfigurationError` for the route's setup codes and a relative
 * endpoint outside a browser, and `ProtocolError` (`UNEXPECTED_RESPONSE`) for a 2xx body
 * without the expected fields.
 */
export function createRouteSessionCallbacks(options: RouteSessionCallbacksOptions): RouteSessionCallbacks {
  // The token action re-sends the start's client data: the service writes the create body
  // to the row on a repeat, so leaving it out would drop it for later runs.
  const clientDataByChat = new Map<string, unknown>();

  async function post(request: ChatRouteRequest): Promise<unknown> {
    const operation = `chat route ${request.action}`;
    const fetchImpl = options.fetch ?? globalThis.fetch;
    const extra = typeof options.headers === 'function' ? await options.headers() : options.headers;
    const headers = new Headers(extra);
    headers.set('content-type', 'application/json');
    headers.set('accept', 'application/json');
    const endpoint =
      options.fetch === undefined ? resolvableEndpoint(options.endpoint, operation) : options.endpoint;
    let response: Response;
    try {
      response = await fetchImpl(endpoint, {
        method: 'POST',
        headers,
        body: JSON.stringify(request),
        credentials: options.credentials ?? 'same-origin',
      });
    } catch (cause) {
      throw new ConnectionError({
        code: 'NETWORK_ERROR',
        message: `${operation}: the request failed`,
        cause,
      });
    }
    const text = await response.text().catch((cause: unknown) => {
      throw new ConnectionError({ code: 'NETWORK_ERROR', message: `${operation}: the body was cut`, cause });
    });
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch (cause) {
      if (response.ok) {
        throw new ProtocolError({ code: 'UNEXPECTED_RESPONSE', message: `${operation}: not JSON`, cause });
      }
      body = undefined;
    }
    if (!response.ok) {
      throw errorFromRoute(
        httpErrorFromResponse({ status: response.status, operation, body, headers: response.headers }),
        operation,
      );
    }
    return body;
  }

  return {
    async startSession({ chatId, clientData, taskIdentifier }) {
      validateChatId(chatId);
      const request: ChatRouteRequest = { action: 'start', chatId };
      if (clientData !== undefined) request.clientData = clientData;
      if (taskIdentifier !== undefined) request.taskIdentifier = taskIdentifier;
      const body = await post(request);
      const publicAccessToken = readString(body, 'publicAccessToken', 'chat route start');
      const sessionId = readString(body, 'sessionId', 'chat route start');
      const currentRunId = readCurrentRunId(body);
      const isCached = readIsCached(body);
      if (clientData === undefined) clientDataByChat.delete(chatId);
      else clientDataByChat.set(chatId, clientData);
      const result: StartSessionResult = { publicAccessToken, sessionId };
      if (currentRunId !== undefined) result.currentRunId = currentRunId;
      if (isCached !== undefined) result.isCached = isCached;
      return result;
    },
    async getAccessToken({ chatId }) {
      validateChatId(chatId);
      const clientData = clientDataByChat.get(chatId);
      const body = await post(
        clientData === undefined ? { action: 'token', chatId } : { action: 'token', chatId, clientData },
      );
      return readString(body, 'publicAccessToken', 'chat route token');
    },
    async getWatchToken({ chatId }) {
      validateChatId(chatId);
      return readString(await post({ action: 'watch', chatId }), 'publicAccessToken', 'chat route watch');
    },
    async closeSession({ chatId, reason }) {
      validateChatId(chatId);
      validateCloseReason(reason);
      const body = await post(
        reason === undefined ? { action: 'close', chatId } : { action: 'close', chatId, reason },
      );
      if ((body as Record<string, unknown> | undefined)?.closed !== true) {
        throw new ProtocolError({
          code: 'UNEXPECTED_RESPONSE',
          message: 'chat route close: the route did not confirm the close',
        });
      }
      clientDataByChat.delete(chatId);
    },
  };
}
