import { ConfigurationError } from '../errors/configuration-error.js';
import { isDurableChatError } from '../errors/durable-chat-error.js';
import { jsonTextTooDeep, MAX_JSON_DEPTH } from '../protocol/json-depth.js';
import type { TriggerConfig } from '../protocol/types.js';
import {
  type ChatRouteAction,
  type ChatRouteCloseResponse,
  type ChatRouteRequest,
  type ChatRouteStartResponse,
  type ChatRouteTokenResponse,
  type ChatRouteWatchResponse,
  parseChatRouteRequest,
} from '../route-client/route-protocol.js';
import { callAuthorize } from './authorize-call.js';
import { readBodyText } from './read-body-text.js';
import { redactSecret } from './redact-secret.js';
import type { RetryOptions } from './retry-delay.js';
import { errorResponse, jsonResponse, mapUpstreamFailure } from './route-responses.js';
import { sessionCreateInput } from './session-create-input.js';
import { type CreateSessionInput, createSessionsApi, type SessionsApi } from './sessions-api.js';
import { createWatchToken } from './watch-token.js';

/** What the app adds to every create the route makes (start and token refresh alike). */
export interface ChatRouteCreateOptions {
  tags?: string[];
  /** Stored on the session row (not sent to the agent). */
  metadata?: Record<string, unknown>;
  expiresAt?: string;
  triggerConfig?: Omit<TriggerConfig, 'basePayload'>;
  /**
   * Replaces the browser's `clientData` as `basePayload.metadata`, e.g. to add the signed-in
   * user's id from the session cookie instead of trusting the browser. Leave it out to pass
   * the browser's `clientData` through.
   */
  clientData?: unknown;
}

export interface ChatRouteHandlerOptions {
  baseURL: string;
  secretKey: string;
  /** The agent task every session of this route runs. Never taken from the browser. */
  taskIdentifier: string;
  /**
   * Decides whether the caller may act on this chat. Read cookies or headers from
   * `request`; its body has already been read. Only `true` allows; `false` answers 403, and
   * so does any other value (`'false'`, `{}`, `undefined`), which is also reported to
   * `onError` as an `INVALID_INPUT` error with `field: 'authorize'`.
   */
  authorize(request: Request, chatId: string, action: ChatRouteAction): boolean | Promise<boolean>;
  /**
   * Deadline of one `authorize` call in ms. Default 10000. Past it the request is not
   * allowed: 503 `AUTHORIZE_TIMEOUT`, and the `SERVER_ERROR` goes to `onError`.
   */
  authorizeTimeoutMs?: number;
  /** Extra create fields, per request. `clientData` is what the browser sent. */
  createOptions?(
    request: Request,
    chatId: string,
    clientData: unknown,
  ): ChatRouteCreateOptions | undefined | Promise<ChatRouteCreateOptions | undefined>;
  fetch?: typeof fetch;
  retry?: RetryOptions;
  timeoutMs?: number;
  /**
   * Lifetime of the read-only tokens the `watch` action hands out, in seconds (1-86400).
   * Default 3600. A follower asks for a new one ahead of expiry.
   */
  watchTokenSeconds?: number;
  /** Largest accepted request body in bytes. Default 65536. */
  maxBodyBytes?: number;
  /**
   * Called with every server-side failure (session service down, `authorize` threw, ...).
   * Default: one `console.error` line with the error's name, code and message, which never
   * contain the secret key.
   */
  onError?(error: unknown, context: { action: ChatRouteAction; chatId: string }): void;
}

/** The default `onError`: one line per failure, with the fix where the operator has one to make. */
function logError(
  error: unknown,
  context: { action: ChatRouteAction; chatId: string },
  options: Pick<ChatRouteHandlerOptions, 'baseURL' | 'secretKey'>,
): void {
  const code = isDurableChatError(error) ? ` ${error.code}` : '';
  const detail = error instanceof Error ? `${error.name}${code}: ${error.message}` : String(error);
  const hint = unreachableHint(error, options.baseURL);
  const line = `[durable-chat/server] chat route "${context.action}" failed: ${detail}${hint}`;
  console.error(redactSecret(line, options.secretKey));
}

/**
 * A session service that does not answer is the operator's to fix (started? the right
 * `baseURL`?); the bare "the request failed" hides why, which only the cause chain knows.
 */
function unreachableHint(error: unknown, baseURL: string): string {
  if (!isDurableChatError(error) || error.code !== 'NETWORK_ERROR') return '';
  let cause: unknown = error.cause;
  let why: string | undefined;
  for (let depth = 0; depth < 5 && cause instanceof Error; depth++) {
    why = cause.message;
    cause = cause.cause;
  }
  const because = why === undefined ? '' : ` (${why.slice(0, 200)})`;
  return (
    `; the session service at ${baseURL} did not answer${because}. Is it running ` +
    '(`npx durable-chat dev` locally), and is baseURL its address?'
  );
}

/**
 * The browser named a task other than this route's. It is never used (the route decides);
 * refusing it, rather than serving this route's task, stops a chat from talking to an agent
 * its code does not name, and the message says the one-line fix.
 */
function taskMismatch(asked: string, served: string): ConfigurationError {
  return new ConfigurationError({
    code: 'TASK_MISMATCH',
    field: 'taskIdentifier',
    status: 400,
    message:
      `the browser asked for task "${asked.slice(0, 100)}", and this chat route serves "${served}". ` +
      "Remove taskIdentifier from the browser's options (the route's taskIdentifier decides), or make them the same.",
  });
}

/**
 * The route's own options made into the sessions API. A missing or malformed `secretKey` or
 * `baseURL` (an unset environment variable) is the operator's to fix: `INVALID_CONFIG`,
 * naming the option, never a generic internal error.
 */
function sessionsApiOf(options: ChatRouteHandlerOptions): SessionsApi {
  try {
    return createSessionsApi(options);
  } catch (error) {
    if (!isDurableChatError(error) || error.code !== 'INVALID_INPUT') throw error;
    const field = (error as { field?: unknown }).field;
    throw new ConfigurationError({
      code: 'INVALID_CONFIG',
      field: typeof field === 'string' ? field : undefined,
      message:
        `createChatRouteHandler: ${error.message}. Set it where the server starts ` +
        '(TRIGGER_SECRET_KEY and TRIGGER_API_URL in .env.local or the environment; `npx durable-chat dev` prints both).',
      cause: error,
    });
  }
}

/**
 * A Fetch-API handler serving the browser's `createRouteSessionCallbacks`: one POST with a
 * JSON `{ action: 'start' | 'token' | 'close' | 'watch', chatId, ... }`. See docs/server.md.
 * `watch` answers a read-only token for following the chat (see docs/follow.md).
 */
export function createChatRouteHandler(
  options: ChatRouteHandlerOptions,
): (request: Request) => Promise<Response> {
  // Built on first use: frameworks import route modules at build time, when the secret
  // may not be set yet. A missing key then fails the request (500), not the build.
  let sessions: SessionsApi | undefined;
  const api = (): SessionsApi => {
    sessions ??= sessionsApiOf(options);
    return sessions;
  };
  const maxBodyBytes = options.maxBodyBytes ?? 65_536;
  const onError =
    options.onError ??
    ((error: unknown, context: { action: ChatRouteAction; chatId: string }) =>
      logError(error, context, options));
  const authorizeTimeoutMs = options.authorizeTimeoutMs ?? 10_000;

  async function createInput(
    request: Request,
    chatId: string,
    browserData: unknown,
  ): Promise<CreateSessionInput> {
    return (await sessionCreateInput(options, request, chatId, browserData)).input;
  }

  /**
   * The session of (this route's task, chat id), by its `session_*` id: a bare chat id may
   * name another task's session with the same external id. The create is idempotent; null
   * when the session is already closed (closing is idempotent too).
   */
  async function sessionOfThisTask(request: Request, chatId: string): Promise<string | null> {
    try {
      const input = await createInput(request, chatId, undefined);
      return (await api().create(input, { signal: request.signal })).id;
    } catch (error) {
      if (isDurableChatError(error) && error.code === 'SESSION_CLOSED') return null;
      throw error;
    }
  }

  async function perform(request: Request, body: ChatRouteRequest): Promise<Response> {
    if (body.action === 'watch') {
      api(); // checks the secret key's configuration first
      // Signed here: a follower never creates a session, and needs no call to the service.
      const publicAccessToken = await createWatchToken(options.secretKey, body.chatId, {
        expiresInSeconds: options.watchTokenSeconds,
      });
      return jsonResponse({ publicAccessToken } satisfies ChatRouteWatchResponse);
    }
    if (body.action === 'close') {
      const sessionId = await sessionOfThisTask(request, body.chatId);
      if (sessionId !== null) await api().close(sessionId, body.reason, { signal: request.signal });
      return jsonResponse({ closed: true } satisfies ChatRouteCloseResponse);
    }
    if (
      body.action === 'start' &&
      body.taskIdentifier !== undefined &&
      body.taskIdentifier !== options.taskIdentifier
    )
      throw taskMismatch(body.taskIdentifier, options.taskIdentifier);
    const input = await createInput(request, body.chatId, body.clientData);
    const session = await api().create(input, { signal: request.signal });
    // Passed on only when the service sent it: the browser must not mistake a missing
    // field for "no live run" and end a healthy turn.
    const liveness = 'currentRunId' in session ? { currentRunId: session.currentRunId } : {};
    if (body.action === 'token') {
      const answer: ChatRouteTokenResponse = { publicAccessToken: session.publicAccessToken, ...liveness };
      return jsonResponse(answer);
    }
    const answer: ChatRouteStartResponse = {
      publicAccessToken: session.publicAccessToken,
      sessionId: session.id,
      // `false`: this call made the session, so `.out` is empty and the browser's first send
      // need not read it first.
      isCached: session.isCached,
      ...liveness,
    };
    return jsonResponse(answer);
  }

  return async function chatRouteHandler(request: Request): Promise<Response> {
    if (request.method !== 'POST') {
      return errorResponse(405, 'METHOD_NOT_ALLOWED', 'use POST', { allow: 'POST' });
    }
    // Requiring JSON makes a cross-site POST a preflighted request, which forms cannot send.
    const contentType = request.headers.get('content-type') ?? '';
    if (!/^application\/json\s*(;|$)/i.test(contentType)) {
      return errorResponse(415, 'UNSUPPORTED_MEDIA_TYPE', 'send Content-Type: application/json');
    }
    const text = await readBodyText(request, maxBodyBytes);
    if (text === undefined) {
      return errorResponse(413, 'PAYLOAD_TOO_LARGE', `the body is over ${maxBodyBytes} bytes`);
    }
    if (jsonTextTooDeep(text)) {
      return errorResponse(400, 'INVALID_INPUT', `body: nests deeper than ${MAX_JSON_DEPTH} levels`);
    }
    let body: ChatRouteRequest;
    try {
      body = parseChatRouteRequest(JSON.parse(text));
    } catch (error) {
      if (!(error instanceof SyntaxError) && !isDurableChatError(error)) throw error;
      const message = isDurableChatError(error) ? error.message : 'the body is not valid JSON';
      return errorResponse(400, 'INVALID_INPUT', message);
    }
    const context = { action: body.action, chatId: body.chatId };
    try {
      const authorized = await callAuthorize(
        () => options.authorize(request, body.chatId, body.action),
        authorizeTimeoutMs,
      );
      if (authorized.kind === 'timed-out') {
        onError(authorized.error, context);
        return errorResponse(503, 'AUTHORIZE_TIMEOUT', 'authorization did not answer in time; retry later');
      }
      if (authorized.kind === 'denied') {
        if (authorized.problem !== undefined) onError(authorized.problem, context);
        return errorResponse(403, 'FORBIDDEN', 'not allowed for this chat');
      }
      return await perform(request, body);
    } catch (error) {
      const { response, serverSide } = mapUpstreamFailure(error);
      // The browser left and its call was cut with it: the browser's doing, not the
      // operator's to fix, and without this every closed tab mid-request logs a failure.
      const leftByClient = request.signal.aborted && isDurableChatError(error) && error.code === 'ABORTED';
      if (serverSide && !leftByClient) onError(error, context);
      return response;
    }
  };
}
