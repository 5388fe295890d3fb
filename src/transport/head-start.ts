import type { UIMessage, UIMessageChunk } from 'ai';
import { createParser } from 'eventsource-parser';
import { markStoppedTurn } from '../client/live-turn.js';
import type { SessionClient, StartSessionInput, StartSessionResult } from '../client/session-client.js';
import { ConnectionError } from '../errors/connection-error.js';
import { isDurableChatError } from '../errors/durable-chat-error.js';
import { HeadStartError } from '../errors/head-start-error.js';
import { httpErrorFromResponse } from '../errors/http-error.js';
import {
  HEAD_START_HANDOVER_CHUNK,
  HEAD_START_SESSION_CHUNK,
  HEAD_START_SESSION_EXISTS,
  type HeadStartSessionData,
} from '../protocol/head-start.js';
import { headStartChunk } from '../protocol/input-chunks.js';
import { withPayloadExtras } from './transport-options.js';

/** The transport's `headStart` option: the first turn of a new chat goes through the app's route. */
export interface HeadStartOptions {
  /** URL of the app's `createHeadStartHandler` route, e.g. `/api/chat/head-start`. */
  api: string | URL;
  /** Extra request headers (a CSRF token); a function is called per request. */
  headers?: HeadersInit | (() => HeadersInit | Promise<HeadersInit>);
  /** Defaults to `same-origin`, so the app's cookies reach its own route. */
  credentials?: RequestCredentials;
  /** Defaults to `globalThis.fetch`, read at call time. */
  fetch?: typeof fetch;
}

export interface HeadStartSend {
  client: SessionClient;
  /** The chat has a reader or a turn of its own on this page already. */
  busy: boolean;
  chatId: string;
  messages: UIMessage[];
  metadata: unknown;
  body: object | undefined;
  headers: Record<string, string> | Headers | undefined;
  abortSignal: AbortSignal | undefined;
}

/**
 * A head start, seen from the browser. One request per first turn:
 *
 *   posted → streaming → handed-over (the route's last chunk came: the agent has the history)
 *                     ↘ cut (an error chunk, a dropped body, an abort)
 *
 * Either way the chat's client adopts the session the route made when the reply ends, so
 * later turns go to `.in`. It adopts it as a session made elsewhere (`isCached: true`): `.in`
 * holds the handover, whose turn-complete may reach `.out` after the next send goes out, and
 * that send must not take it for its own.
 */
export class HeadStart {
  /** Sessions the route made, waiting for the chat's client to adopt them. */
  readonly #handed = new Map<string, StartSessionResult>();
  readonly #inFlight = new Set<string>();
  readonly #options: HeadStartOptions;

  constructor(options: HeadStartOptions) {
    this.#options = options;
  }

  /** The app's `startSession`, answering from a head start when one just made the session. */
  wrapStartSession(
    startSession: (input: StartSessionInput) => Promise<StartSessionResult>,
  ): (input: StartSessionInput) => Promise<StartSessionResult> {
    return (input) => {
      const handed = this.#handed.get(input.chatId);
      if (handed === undefined) return startSession(input);
      this.#handed.delete(input.chatId);
      return Promise.resolve(handed);
    };
  }

  /**
   * The first turn's reply from the app's route, or undefined when this send is no head start
   * (the chat has a session, a turn, or one in flight) or the route said the session exists:
   * then it goes to `.in` as usual.
   */
  async send(call: HeadStartSend): Promise<ReadableStream<UIMessageChunk> | undefined> {
    const { client, chatId } = call;
    await client.ready();
    const state = client.getState();
    const last = call.messages[call.messages.length - 1];
    const applies =
      !call.busy &&
      !this.#inFlight.has(chatId) &&
      last?.role === 'user' &&
      state.token === undefined &&
      state.sessionId === undefined &&
      !state.closed &&
      !state.turnLive;
    if (!applies) return undefined;
    this.#inFlight.add(chatId);
    let response: Response;
    try {
      response = await this.#post(call);
    } catch (error) {
      this.#inFlight.delete(chatId);
      throw error;
    }
    if (response.ok && response.body !== null) return this.#relay(call, response.body);
    this.#inFlight.delete(chatId);
    const body = (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined;
    if (response.status === 409 && body?.code === HEAD_START_SESSION_EXISTS) return undefined;
    throw httpErrorFromResponse({
      status: response.status,
      operation: 'head start',
      body,
      headers: response.headers,
    });
  }

  async #post(call: HeadStartSend): Promise<Response> {
    const options = this.#options;
    const extra = typeof options.headers === 'function' ? await options.headers() : options.headers;
    const headers = new Headers(extra);
    new Headers(call.headers).forEach((value, key) => {
      headers.set(key, value);
    });
    headers.set('content-type', 'application/json');
    headers.set('accept', 'text/event-stream');
    const chunk = withPayloadExtras(
      headStartChunk({ chatId: call.chatId, headStartMessages: call.messages, metadata: call.metadata }),
      call.body,
    );
    const fetchImpl = options.fetch ?? globalThis.fetch;
    try {
      return await fetchImpl(options.api, {
        method: 'POST',
        headers,
        body: JSON.stringify(chunk),
        credentials: options.credentials ?? 'same-origin',
        signal: call.abortSignal,
      });
    } catch (cause) {
      if (call.abortSignal?.aborted) throw cause; // the AI SDK knows an AbortError
      throw new ConnectionError({ code: 'NETWORK_ERROR', message: 'head start: the request failed', cause });
    }
  }

  /** The route's UI message stream, without its own two chunks; the session adopted at the end. */
  #relay(call: HeadStartSend, body: ReadableStream<Uint8Array>): ReadableStream<UIMessageChunk> {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let session: HeadStartSessionData | undefined;
    let handedOver = false;
    let handoverInSeq: number | undefined;
    let failure: HeadStartError | undefined;
    let ended = false;
    const cut = new HeadStartError('head start: the reply was cut off before the handover');
    const end = async () => {
      if (ended) return;
      ended = true;
      this.#inFlight.delete(call.chatId);
      if (session === undefined) return;
      // The agent answers the handover with a turn-complete of its own (no content), unless the
      // route said its handover failed (an error and no handover chunk). A connection lost
      // before the end counts as handed over: the route hands over what was said when it
      // notices. Where the service numbers appends (the handover came with its `.in` seq), the
      // next send tells that turn-complete from its own by seq and needs no mark.
      const unnumbered = handedOver ? handoverInSeq === undefined : failure === cut;
      // `isCached: true`, as for a session another page made: `.in` holds the handover, whose
      // turn-complete may not be on `.out` yet, so the next send holds records for its own seq.
      this.#handed.set(call.chatId, {
        sessionId: session.sessionId,
        publicAccessToken: session.publicAccessToken,
        isCached: true,
      });
      try {
        await call.client.ensureSession();
      } finally {
        this.#handed.delete(call.chatId);
      }
      // Marked as a turn whose reply has not begun and whose turn-complete may still come (as
      // for a stopped send): on a wire without `seq` the next send then skips that
      // turn-complete instead of ending on it.
      if (unnumbered) markStoppedTurn(call.client.store, 'unstarted');
    };
    let cancelled = false;
    return new ReadableStream<UIMessageChunk>({
      start: (controller) => {
        // After a cancel the stream is closed: nothing more may go into it.
        const emit = (chunk: UIMessageChunk) => {
          if (!cancelled) controller.enqueue(chunk);
        };
        const settle = (error: unknown) => {
          if (cancelled) return;
          if (error === undefined) controller.close();
          else controller.error(error);
        };
        const parser = createParser({
          onEvent: (event) => {
            if (event.data === '[DONE]') return;
            let chunk: UIMessageChunk;
            try {
              chunk = JSON.parse(event.data) as UIMessageChunk;
            } catch (cause) {
              failure ??= new HeadStartError('head start: the route sent a chunk that is not JSON', cause);
              return;
            }
            if (chunk.type === HEAD_START_HANDOVER_CHUNK) {
              handedOver = true;
              handoverInSeq = readInSeq(chunk.data);
            } else if (failure !== undefined)
              return; // nothing after a failure is shown
            else if (chunk.type === HEAD_START_SESSION_CHUNK) session = readSession(chunk.data);
            else if (chunk.type === 'error') failure = new HeadStartError(`head start: ${chunk.errorText}`);
            else emit(chunk);
          },
        });
        const pump = async (): Promise<void> => {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            // Read on after an error chunk: the handover chunk may follow it.
            parser.feed(decoder.decode(value, { stream: true }));
          }
          if (failure === undefined && !handedOver) failure = cut;
          if (failure !== undefined) await reader.cancel().catch(() => {});
          await end();
          settle(failure);
        };
        pump().catch(async (cause: unknown) => {
          await end().catch((error: unknown) => call.client.environment.warn(`head start: ${String(error)}`));
          // useChat's stop aborted the request: the reply just ends there.
          if (call.abortSignal?.aborted) settle(undefined);
          else
            settle(
              isDurableChatError(cause)
                ? cause
                : new HeadStartError('head start: the reply broke off', cause),
            );
        });
      },
      cancel: async () => {
        cancelled = true;
        await reader.cancel().catch(() => {});
        await end();
      },
    });
  }
}

function readInSeq(data: unknown): number | undefined {
  const inSeq = (typeof data === 'object' && data !== null ? data : {}) as { inSeq?: unknown };
  return typeof inSeq.inSeq === 'number' && Number.isInteger(inSeq.inSeq) ? inSeq.inSeq : undefined;
}

function readSession(data: unknown): HeadStartSessionData {
  const record = (typeof data === 'object' && data !== null ? data : {}) as Record<string, unknown>;
  const { sessionId, publicAccessToken } = record;
  if (
    typeof sessionId !== 'string' ||
    sessionId === '' ||
    typeof publicAccessToken !== 'string' ||
    publicAccessToken === ''
  )
    throw new HeadStartError('head start: the route sent no session id and token');
  return { sessionId, publicAccessToken };
}
