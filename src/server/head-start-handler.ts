import type { UIMessage } from 'ai';
import { isDurableChatError } from '../errors/durable-chat-error.js';
import {
  HEAD_START_HANDOVER_CHUNK,
  HEAD_START_SESSION_CHUNK,
  HEAD_START_SESSION_EXISTS,
  type HeadStartHandoverData,
  type HeadStartSessionData,
  parseHeadStartRequest,
} from '../protocol/head-start.js';
import { headStartChunk, stopChunk } from '../protocol/input-chunks.js';
import { jsonTextTooDeep, MAX_JSON_DEPTH } from '../protocol/json-depth.js';
import { MAX_APPEND_BODY_BYTES } from '../protocol/limits.js';
import type { ChatInputChunk } from '../protocol/types.js';
import { serializeAppend } from '../protocol/validate.js';
import { callAuthorize } from './authorize-call.js';
import type { ChatRouteCreateOptions } from './chat-route-handler.js';
import { type HeadStartReply, replyChunks, withContent } from './head-start-reply.js';
import { readBodyText } from './read-body-text.js';
import { requestUpstream, type UpstreamContext } from './request-upstream.js';
import { type RetryOptions, resolveRetryOptions } from './retry-delay.js';
import { errorResponse, jsonResponse, mapUpstreamFailure } from './route-responses.js';
import { sessionCreateInput } from './session-create-input.js';
import { createSessionsApi, type SessionsApi } from './sessions-api.js';

export type { HeadStartReply, UIMessageStreamProducer } from './head-start-reply.js';

/** What the app's `reply` gets: the chat's history, the new user message last. */
export interface HeadStartReplyInput {
  chatId: string;
  messages: UIMessage[];
  /** The client data the browser sent (or `createOptions`' replacement for it). */
  clientData: unknown;
  /** Aborted when the browser goes away: pass it to `streamText` as `abortSignal`. */
  signal: AbortSignal;
  request: Request;
}

export interface HeadStartHandlerOptions {
  baseURL: string;
  secretKey: string;
  /** The agent task that takes the chat over after the first reply. */
  taskIdentifier: string;
  /** As the chat route's: only `true` allows; anything else answers 403. */
  authorize(request: Request, chatId: string): boolean | Promise<boolean>;
  /** Deadline of one `authorize` call in ms. Default 10000. */
  authorizeTimeoutMs?: number;
  /** Extra create fields, as the chat route's `createOptions`. */
  createOptions?(
    request: Request,
    chatId: string,
    clientData: unknown,
  ): ChatRouteCreateOptions | undefined | Promise<ChatRouteCreateOptions | undefined>;
  /**
   * The first reply, made here while the agent's run boots: typically
   * `streamText({ model, messages: await convertToModelMessages(messages), abortSignal: signal })`.
   * Use the agent's model and instructions, so the later turns sound the same.
   */
  reply(input: HeadStartReplyInput): HeadStartReply | Promise<HeadStartReply>;
  /**
   * Keeps the handover alive after the browser left (serverless platforms freeze a function
   * once its response ends): e.g. Vercel's `waitUntil`. Default: none.
   */
  waitUntil?(promise: Promise<unknown>): void;
  fetch?: typeof fetch;
  retry?: RetryOptions;
  timeoutMs?: number;
  /** Largest accepted request body in bytes (it holds the history). Default 1 MiB. */
  maxBodyBytes?: number;
  /** Server-side failures (the model, the handover append, the session service). Default: `console.error`. */
  onError?(error: unknown, context: { chatId: string }): void;
}

function logError(error: unknown, context: { chatId: string }): void {
  const code = isDurableChatError(error) ? ` ${error.code}` : '';
  const detail = error instanceof Error ? `${error.name}${code}: ${error.message}` : String(error);
  console.error(`[durable-chat/server] head start of chat ${context.chatId} failed: ${detail}`);
}

const encoder = new TextEncoder();
const sse = (value: unknown) => encoder.encode(`data: ${JSON.stringify(value)}\n\n`);
const REPLY_FAILED = 'the head-start reply failed';

/**
 * A Fetch-API handler for the first turn of a new chat (the transport's `headStart`): it
 * creates the session (the agent's run starts booting), streams the app's own reply at once
 * as the AI SDK's UI message stream, then appends `handover-prepare` with the history and
 * that reply to `.in`, so the agent takes the chat over for every later turn. See
 * docs/head-start.md.
 *
 * - The session exists already (a retry, another device): 409 `SESSION_EXISTS`; the
 *   transport then sends through `.in` as usual.
 * - The browser leaves mid-reply (stop, reload, network): the reply stops there and the agent
 *   gets what was said, the partial reply included. With no reply content at all (that, or a
 *   failed model), a `stop` follows the handover: the agent never answers on its own.
 */
export function createHeadStartHandler(
  options: HeadStartHandlerOptions,
): (request: Request) => Promise<Response> {
  let sessions: SessionsApi | undefined;
  const api = (): SessionsApi => {
    sessions ??= createSessionsApi(options);
    return sessions;
  };
  const maxBodyBytes = options.maxBodyBytes ?? MAX_APPEND_BODY_BYTES;
  const onError = options.onError ?? logError;
  const authorizeTimeoutMs = options.authorizeTimeoutMs ?? 10_000;

  // `preload`: the run boots now, in parallel with the reply made here.
  const createInput = (request: Request, chatId: string, browserData: unknown) =>
    sessionCreateInput(options, request, chatId, browserData);

  /** One append with the session's own token, retried under one part id (stored once). */
  async function append(
    sessionId: string,
    token: string,
    chunk: ChatInputChunk,
  ): Promise<number | undefined> {
    const context: UpstreamContext = {
      baseURL: options.baseURL.replace(/\/+$/, ''),
      secretKey: token,
      fetch: options.fetch,
      retry: resolveRetryOptions(options.retry),
      timeoutMs: options.timeoutMs ?? 30_000,
    };
    const { body } = await requestUpstream(context, {
      path: `/realtime/v1/sessions/${encodeURIComponent(sessionId)}/in/append`,
      body: JSON.parse(serializeAppend(chunk)),
      operation: 'head-start handover',
      idempotent: true,
      headers: { 'x-part-id': `head-start-${crypto.randomUUID()}` },
    });
    const seq = (body as { seq?: unknown } | undefined)?.seq;
    return typeof seq === 'number' && Number.isInteger(seq) ? seq : undefined;
  }

  return async function headStartHandler(request: Request): Promise<Response> {
    if (request.method !== 'POST')
      return errorResponse(405, 'METHOD_NOT_ALLOWED', 'use POST', { allow: 'POST' });
    const contentType = request.headers.get('content-type') ?? '';
    if (!/^application\/json\s*(;|$)/i.test(contentType)) {
      return errorResponse(415, 'UNSUPPORTED_MEDIA_TYPE', 'send Content-Type: application/json');
    }
    const text = await readBodyText(request, maxBodyBytes);
    if (text === undefined)
      return errorResponse(413, 'PAYLOAD_TOO_LARGE', `the body is over ${maxBodyBytes} bytes`);
    if (jsonTextTooDeep(text)) {
      return errorResponse(400, 'INVALID_INPUT', `body: nests deeper than ${MAX_JSON_DEPTH} levels`);
    }
    let parsed: ReturnType<typeof parseHeadStartRequest>;
    try {
      parsed = parseHeadStartRequest(JSON.parse(text));
    } catch (error) {
      if (!(error instanceof SyntaxError) && !isDurableChatError(error)) throw error;
      return errorResponse(
        400,
        'INVALID_INPUT',
        isDurableChatError(error) ? error.message : 'the body is not valid JSON',
      );
    }
    const { chatId, messages } = parsed;
    const context = { chatId };
    let session: { id: string; publicAccessToken: string };
    let clientData: unknown;
    try {
      const authorized = await callAuthorize(() => options.authorize(request, chatId), authorizeTimeoutMs);
      if (authorized.kind === 'timed-out') {
        onError(authorized.error, context);
        return errorResponse(503, 'AUTHORIZE_TIMEOUT', 'authorization did not answer in time; retry later');
      }
      if (authorized.kind === 'denied') {
        if (authorized.problem !== undefined) onError(authorized.problem, context);
        return errorResponse(403, 'FORBIDDEN', 'not allowed for this chat');
      }
      const created = await createInput(request, chatId, parsed.metadata);
      clientData = created.clientData;
      const answer = await api().create(created.input, { signal: request.signal });
      if (answer.isCached) {
        // Its agent may hold history already: a head start would hand over a second one.
        return jsonResponse(
          { error: 'this chat has a session already; send through .in', code: HEAD_START_SESSION_EXISTS },
          409,
        );
      }
      session = { id: answer.id, publicAccessToken: answer.publicAccessToken };
    } catch (error) {
      const { response, serverSide } = mapUpstreamFailure(error);
      if (serverSide) onError(error, context);
      return response;
    }

    const gone = new AbortController();
    const messageId = crypto.randomUUID();
    const replyError = (error: unknown) => {
      onError(error, context);
      return REPLY_FAILED;
    };
    let finish: (value?: unknown) => void = () => {};
    const finished = new Promise((resolve) => {
      finish = resolve;
    });
    options.waitUntil?.(finished);

    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        const send = (value: unknown) => {
          if (!gone.signal.aborted) controller.enqueue(sse(value));
        };
        const sessionData: HeadStartSessionData = {
          sessionId: session.id,
          publicAccessToken: session.publicAccessToken,
        };
        send({ type: HEAD_START_SESSION_CHUNK, data: sessionData, transient: true });
        let built: UIMessage | undefined;
        try {
          const reply = await options.reply({ chatId, messages, clientData, signal: gone.signal, request });
          const chunks = replyChunks(reply, {
            messages,
            messageId,
            onError: replyError,
            onMessage: (message) => {
              built = message;
            },
          });
          // Read to the end even after the browser left: an aborted reply ends with its
          // `abort` chunk, and only then is the message it built known.
          for await (const chunk of chunks) send(chunk);
        } catch (error) {
          if (!gone.signal.aborted) {
            onError(error, context);
            send({ type: 'error', errorText: REPLY_FAILED });
          }
        }
        try {
          const answer = withContent(built);
          const history = answer === undefined ? messages : [...messages, answer];
          const inSeq = await append(
            session.id,
            session.publicAccessToken,
            headStartChunk({ chatId, headStartMessages: history, metadata: clientData }),
          );
          // Nothing to hand over but the question: the agent must not answer it behind the user's back.
          if (answer === undefined) await append(session.id, session.publicAccessToken, stopChunk());
          // Also after a failed reply: the browser learns that the agent has the history.
          const handover: HeadStartHandoverData = inSeq === undefined ? {} : { inSeq };
          send({ type: HEAD_START_HANDOVER_CHUNK, data: handover, transient: true });
          if (!gone.signal.aborted) controller.enqueue(encoder.encode('data: [DONE]\n\n'));
          if (!gone.signal.aborted) controller.close();
        } catch (error) {
          onError(error, context);
          if (!gone.signal.aborted) {
            send({ type: 'error', errorText: 'the head-start handover failed' });
            controller.close();
          }
        } finally {
          finish();
        }
      },
      cancel() {
        gone.abort();
      },
    });
    return new Response(body, {
      headers: {
        'content-type': 'text/event-stream',
        // The session token travels in this body: no cache may keep it.
        'cache-control': 'no-store',
        'x-accel-buffering': 'no',
        'x-vercel-ai-ui-message-stream': 'v1',
      },
    });
  };
}
