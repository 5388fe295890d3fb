import { ConnectionError } from '../errors/connection-error.js';
import { isDurableChatError } from '../errors/durable-chat-error.js';
import { SessionClosedError } from '../errors/http-error.js';
import { readTokenClaims } from '../protocol/token-claims.js';
import type { ChatInputChunk } from '../protocol/types.js';
import { utf8ByteLength } from '../protocol/utf8.js';
import { serializeAppend } from '../protocol/validate.js';
import { type AppendResult, appendWithRetry } from './append-request.js';
import { type ClientContext, createClientContext } from './client-context.js';
import { type ClientEnvironment, listenForAbort, randomPartId, sleep } from './environment.js';
import type { SessionEvent, SessionEventHandler } from './events.js';
import { callbackWithTimeout, type HeadersOption, isTransientCallbackError, requireBaseURL } from './http.js';
import {
  type InspectionNote,
  inspectNote,
  isInspected,
  registerInspectable,
  tokenFacts,
} from './inspection.js';
import type { LivenessOptions, ResolvedLivenessOptions } from './liveness-options.js';
import { type OutReadEnd, OutReader, type OutReadHandlers, type OutReadOptions } from './out-reader.js';
import type { SessionPersistence } from './persistence.js';
import { PersistenceBinding } from './persistence-binding.js';
import { scopedPersistence } from './persistence-scope.js';
import { iterateOut, type ReadOutItem } from './read-out-iterable.js';
import { backoffDelay, type RetryOptions } from './retry-policy.js';
import { type ChatSessionState, createSessionStore, type SessionStore } from './session-store.js';
import type { TokenManager } from './token-manager.js';
import { endLive } from './turn-records.js';

/** What the app's `startSession` receives. It runs on the app's server (the secret key lives there). */
export interface StartSessionInput {
  chatId: string;
  /** The client's `taskIdentifier` option: absent when the app's server decides (the route helpers). */
  taskIdentifier?: string;
  clientData: unknown;
}

export interface StartSessionResult {
  publicAccessToken: string;
  /** The friendly `session_*` id; without it the chat id addresses the session. */
  sessionId?: string;
  /**
   * The session row's `currentRunId` as the create call returned it: `null` when no run is
   * live, a string when one is, `undefined` when the app did not say. A live turn that has
   * gone quiet asks `startSession` again and ends when the run it waits for is gone.
   */
  currentRunId?: string | null;
  /**
   * The create call's `isCached`: `false` when this call created the session, `true` when it
   * already existed, `undefined` when the app did not say. `false` tells the transport that
   * nothing is on `.out` yet, so the chat's first send appends at once instead of first
   * reading `.out` to find where the earlier turns end (see docs/transport.md).
   */
  isCached?: boolean;
}

export interface SessionClientOptions {
  /** The service (or dev server) origin, e.g. `http://localhost:3030`. */
  baseURL: string;
  chatId: string;
  /**
   * The chat-agent task's id, for a `startSession` of your own that needs it. Leave it out
   * with `createRouteSessionCallbacks`: the route's `taskIdentifier` decides, and a different
   * one here fails the first start with `TASK_MISMATCH`.
   */
  taskIdentifier?: string;
  /**
   * Creates (or returns) the session on the app's server, where the secret key lives.
   * Called once per chat, on the first send or on `preload`; concurrent calls share one.
   */
  startSession: (input: StartSessionInput) => Promise<StartSessionResult>;
  /** A fresh session token. Default: `startSession` again (create is idempotent per chat). */
  getAccessToken?: (input: { chatId: string }) => Promise<string>;
  /** Typed client data for the agent: sent as `metadata`; per-call metadata wins per key. */
  clientData?: unknown;
  /** Extra headers on every request (never replaces `Authorization`). */
  headers?: HeadersOption;
  /** Default: `globalThis.fetch`, read per call. */
  fetch?: typeof globalThis.fetch;
  /** Where per-chat records live across reloads. Default: none (memory only). */
  persistence?: SessionPersistence;
  /**
   * Who the records belong to (the signed-in user's id): part of each record's key, and only
   * then does a record keep the session token (read again by this scope alone). Without it
   * a restored chat asks `startSession` once before it reads (see docs/security.md).
   */
  scope?: string;
  /** Append retries and `.out` reconnects; see `RetryOptions` for defaults. */
  retry?: RetryOptions;
  /** `Timeout-Seconds` of each `.out` long-poll (1-600). Default 60. */
  streamTimeoutSeconds?: number;
  /** How a silent live turn checks that its run lives; see `LivenessOptions` for defaults. */
  liveness?: LivenessOptions;
  /** Telemetry; see `SessionEvent`. */
  onEvent?: SessionEventHandler;
  /** Timers, clock, randomness, wake events, warnings; injected by tests and non-browser hosts. */
  environment?: Partial<ClientEnvironment>;
}

export interface AppendOptions {
  signal?: AbortSignal;
  /** Extra headers for this append only. */
  headers?: HeadersOption;
  /** How the `message-sent` event labels this append. Default: derived from the chunk. */
  kind?: (SessionEvent & { type: 'message-sent' })['kind'];
  /** Called as each attempt goes out: from then on the message may be stored. */
  onAttempt?: () => void;
  /**
   * The append's `X-Part-Id` (default: a new random one). The same id again is the same
   * append: the server stores it once (a page that reloaded mid-append sends it again).
   */
  partId?: string;
}

/**
 * What the session row says about the agent run, read by calling `startSession` again
 * (idempotent): `currentRunId` is `null` when no run is live, `undefined` when the app's
 * `startSession` does not report it (then nothing can tell whether a run lives).
 */
export interface RunCheck {
  currentRunId: string | null | undefined;
}

function kindOf(chunk: ChatInputChunk): NonNullable<AppendOptions['kind']> {
  if (chunk.kind === 'stop') return 'stop';
  if (chunk.payload.trigger === 'action') return 'action';
  if (chunk.payload.trigger === 'regenerate-message') return 'regenerate';
  return 'message';
}

/**
 * The I/O core for one chat: creates the session lazily, appends to `.in` with retries and
 * an idempotency key, reads `.out` across drops, owns the token and the per-chat store.
 * Framework-free; the transport and the React hooks build on it.
 */
export class SessionClient {
  readonly chatId: string;
  readonly store: SessionStore;
  readonly #context: ClientContext;
  readonly #readers = new Set<AbortController>();
  readonly #persistence: PersistenceBinding | undefined;
  readonly #hydration: Promise<void>;
  #starting: Promise<void> | undefined;
  #appendQueue: Promise<void> = Promise.resolve();
  #pendingAppends = 0;
  /** This client's own `startSession` call created the session (`isCached: false`). */
  #createdSession = false;
  /** An append (message, action, stop, ...) was started by this client. */
  #appendedOnce = false;
  /** This client's `startSession` said the session already existed (`isCached: true`). */
  #metExistingSession = false;
  #replacing: Promise<void> | undefined;
  readonly #unregisterInspectable: () => void;
  /** Sessions replaced after a 404 (see `replaceSession`). */
  #generation = 0;
  readonly #options: SessionClientOptions;

  constructor(options: SessionClientOptions) {
    requireBaseURL(options.baseURL);
    this.#options = options;
    this.chatId = options.chatId;
    this.store = createSessionStore(options.chatId);
    this.#context = createClientContext({
      ...options,
      store: this.store,
      fetchToken: () => this.#fetchToken(),
      markClosed: (error) => this.markClosed(error.closedReason, error),
      replaceSession: () => this.replaceSession(),
      sessionGeneration: () => this.#generation,
    });
    const env = this.#context.env;
    this.#persistence =
      options.persistence === undefined
        ? undefined
        : new PersistenceBinding(
            this.chatId,
            this.store,
            scopedPersistence(options.persistence, options.scope),
            env.warn,
            env.now,
          );
    this.#hydration = this.#hydrate();
    this.#unregisterInspectable = registerInspectable(this);
  }

  getState(): ChatSessionState {
    return this.store.getState();
  }

  /** The token manager (the transport adopts tokens and forces refreshes through it). */
  get tokens(): TokenManager {
    return this.#context.tokens;
  }

  get environment(): ClientEnvironment {
    return this.#context.env;
  }

  get liveness(): ResolvedLivenessOptions {
    return this.#context.liveness;
  }

  emit(event: SessionEvent): void {
    this.#context.emit(event);
  }

  /** True while an append is queued or in flight, or a reader is open. */
  get busy(): boolean {
    return this.#pendingAppends > 0 || this.#readers.size > 0;
  }

  /**
   * True while `.out` is known to be empty without reading it: this client's own
   * `startSession` created the session (`isCached: false`), nothing was appended through
   * this client since, and nothing was read (no cursor). Only another device appending to
   * the same chat in that window could have written to `.out`; a reload, a refreshed token
   * or a repeated `startSession` (`isCached: true`) never makes it true.
   */
  get outKnownEmpty(): boolean {
    return this.#createdSession && !this.#appendedOnce && this.store.getState().lastEventId === undefined;
  }

  /**
   * True when this client's `startSession` reported that the session already existed
   * (`isCached: true`): another page or device made it, so `.in` may hold inputs whose
   * turns have not begun even where `.out` is empty.
   */
  get sessionPreexisted(): boolean {
    return this.#metExistingSession;
  }

  /** Resolves once the persisted record, if any, has been loaded. */
  ready(): Promise<void> {
    return this.#hydration;
  }

  /** Creates the session now instead of on the first send. Concurrent calls share one start. */
  async preload(): Promise<void> {
    await this.ensureSession();
  }

  /** Starts the session unless this chat already has one (from this page or persistence). */
  async ensureSession(): Promise<void> {
    await this.#hydration;
    this.#assertOpen();
    const state = this.store.getState();
    if (state.token !== undefined) return;
    this.#starting ??= this.#start().finally(() => {
      this.#starting = undefined;
    });
    return this.#starting;
  }

  /**
   * Appends one chunk to `.in`. The size is checked before anything is sent; the session
   * starts first if needed. Returns the record's `.in` `seq` when the server gives one.
   */
  async append(chunk: ChatInputChunk, options: AppendOptions = {}): Promise<AppendResult> {
    return this.appendBody(serializeAppend(chunk), options.kind ?? kindOf(chunk), options);
  }

  /**
   * Appends a body serialised earlier (`serializeAppend`), e.g. the one a page saved while its
   * append was in flight, sent again after a reload under its saved `partId`.
   */
  async appendBody(
    body: string,
    kind: NonNullable<AppendOptions['kind']>,
    options: AppendOptions = {},
  ): Promise<AppendResult> {
    this.#appendedOnce = true;
    // Appends of one chat go out one at a time, in call order: a stop must never overtake
    // the message it stops, nor a message the stop sent just before it.
    this.#pendingAppends++;
    const previous = this.#appendQueue;
    let done = () => {};
    this.#appendQueue = new Promise<void>((resolve) => {
      done = resolve;
    });
    let result: AppendResult;
    try {
      await previous;
      await this.ensureSession();
      this.#assertOpen();
      result = await appendWithRetry(
        this.#context,
        body,
        options.partId ?? randomPartId(),
        options.signal,
        options.headers,
        options.onAttempt,
      );
    } finally {
      this.#pendingAppends--;
      done();
    }
    this.emit({
      type: 'message-sent',
      chatId: this.chatId,
      kind,
      durationMs: result.durationMs,
      bytes: utf8ByteLength(body),
      attempts: result.attempts,
      seq: result.seq,
    });
    return result;
  }

  /**
   * Reads `.out` as an async iterable of classified records (and trim notices), resuming
   * across drops until the consumer stops, `signal` aborts, or a peek finds the stream
   * settled. Throws `STREAM_DISCONNECTED` when reconnects run out, `SESSION_CLOSED` once closed.
   */
  readOut(options: Partial<OutReadOptions> = {}): AsyncIterable<ReadOutItem> {
    return iterateOut(
      (handlers, signal) =>
        this.read(
          {
            from: options.from ?? this.store.getState().lastEventId,
            peekSettled: options.peekSettled,
            signal,
            trackCursor: false,
          },
          handlers,
        ),
      options.signal,
      (seqNum) => {
        const current = this.store.getState().lastEventId;
        if (current === undefined || seqNum > current) this.store.setState({ lastEventId: seqNum });
      },
    );
  }

  /**
   * The push-based read behind `readOut`: handlers run synchronously per record. Chained
   * rather than `async`: a read lasts the whole turn, and a suspended async frame per chat
   * for that long is memory a thousand concurrent chats pay a thousand times.
   */
  read(options: OutReadOptions, handlers: OutReadHandlers): Promise<OutReadEnd> {
    const generation = this.#generation;
    return this.ensureSession().then(() => {
      // The start this read waited for found another session than the stored one: the
      // cursor was the old `.out`'s (see `start`).
      if (this.#generation !== generation) {
        options = { ...options, from: undefined };
        handlers.onSessionReplaced?.();
      }
      // A caller that owns the read's controller lends it (close() aborts it directly); any
      // other signal gets one of the client's own chained to it.
      const owned = options.controller;
      const controller = owned ?? new AbortController();
      const outer = options.signal;
      const onAbort = () => controller.abort(outer?.reason);
      if (owned === undefined) listenForAbort(outer, onAbort);
      this.#readers.add(controller);
      const done = () => {
        if (owned === undefined) outer?.removeEventListener('abort', onAbort);
        this.#readers.delete(controller);
      };
      return new OutReader(this.#context, { ...options, signal: controller.signal }, handlers)
        .run()
        .finally(done);
    });
  }

  /**
   * Asks the session row whether a run is live, by calling the app's `startSession` again
   * (idempotent per chat; it also brings a fresh token). A closed session marks the chat
   * closed and throws `SESSION_CLOSED`; any other failure throws and tells nothing.
   */
  async checkRun(): Promise<RunCheck> {
    const result = await this.#callStartSession();
    if (result.sessionId !== undefined && this.store.getState().sessionId === undefined)
      this.store.setState({ sessionId: result.sessionId });
    if (typeof result.publicAccessToken === 'string' && result.publicAccessToken !== '')
      this.#context.tokens.adopt(result.publicAccessToken, 'session-start');
    return { currentRunId: result.currentRunId };
  }

  /**
   * The server answered 404 for this chat's session (a restarted dev server, another
   * environment's or a deleted session). Asks `startSession` again, which creates or finds
   * the session for the chat id, and adopts its id and token; the cursor is dropped (the new
   * `.out` has its own). Concurrent callers share one call; the `session-replaced` event says so.
   * The same live session back (the 404 was not the session's: a proxy, an edge that did not
   * know it yet): only its token is taken; its `.out`, and the cursor into it, stay.
   */
  replaceSession(): Promise<void> {
    this.#replacing ??= this.#callStartSession()
      .then((result) => {
        const previousSessionId = this.store.getState().sessionId;
        if (
          result.sessionId !== undefined &&
          result.sessionId === previousSessionId &&
          result.isCached !== false
        ) {
          this.#context.tokens.adopt(result.publicAccessToken, 'session-start');
          return;
        }
        this.#generation++;
        this.store.setState({ sessionId: result.sessionId, lastEventId: undefined });
        this.#context.tokens.adopt(result.publicAccessToken, 'session-start');
        this.emit({
          type: 'session-replaced',
          chatId: this.chatId,
          previousSessionId,
          sessionId: result.sessionId,
        });
      })
      .finally(() => {
        this.#replacing = undefined;
      });
    return this.#replacing;
  }

  /** Marks the chat closed: terminal. Every reader stops; later sends fail locally. */
  markClosed(reason: string | null, error?: SessionClosedError): void {
    if (this.store.getState().closed) return;
    const closedError = error ?? new SessionClosedError({ operation: 'session', closedReason: reason });
    this.store.setState({
      closed: true,
      closedReason: reason,
      turns: endLive(this.store.getState().turns, 'over'),
      status: { type: 'closed' },
      lastError: closedError,
    });
    this.emit({ type: 'session-closed', chatId: this.chatId, reason });
    for (const reader of this.#readers) reader.abort(closedError);
  }

  /** Resolves once every pending save of the persisted record has been written. */
  async flushPersistence(): Promise<void> {
    await this.#hydration;
    await this.#persistence?.flush();
  }

  /**
   * Writes no persisted record until the returned function is called (see
   * `PersistenceBinding.hold`): a tab following another tab's turn leaves the record to that
   * tab. Without persistence it does nothing.
   */
  holdPersistence(): () => void {
    return this.#persistence?.hold() ?? (() => {});
  }

  /** Writes the record once now, held or not (see `PersistenceBinding.saveThroughHolds`). */
  saveThroughHolds(): void {
    this.#persistence?.saveThroughHolds();
  }

  /** Releases every reader and stops persisting. The store keeps its last state. */
  close(): void {
    for (const reader of this.#readers) reader.abort();
    this.#readers.clear();
    this.#persistence?.dispose();
    this.#unregisterInspectable();
  }

  #assertOpen(): void {
    const state = this.store.getState();
    if (state.closed) throw new SessionClosedError({ operation: 'send', closedReason: state.closedReason });
  }

  async #start(): Promise<void> {
    const result = await this.#startWithRetries();
    const stored = this.store.getState().sessionId;
    if (stored !== undefined && result.sessionId !== undefined && result.sessionId !== stored) {
      // A restored record (whose token was not kept) names a session the server no longer
      // has: the start made another, as a 404 would have (see `replaceSession`).
      this.#generation++;
      this.store.setState({ sessionId: result.sessionId, lastEventId: undefined });
      this.emit({
        type: 'session-replaced',
        chatId: this.chatId,
        previousSessionId: stored,
        sessionId: result.sessionId,
      });
    } else if (result.sessionId !== undefined) this.store.setState({ sessionId: result.sessionId });
    // Only the start that gave this client its token counts: a later start (the token was
    // lost) meets the session this one created, and says so with `isCached: true`.
    this.#createdSession = result.isCached === false && !this.#appendedOnce;
    this.#metExistingSession = result.isCached === true;
    this.#context.tokens.adopt(result.publicAccessToken, 'session-start');
  }

  /**
   * The session's start, retried like an append when the app's route fails for a moment (a
   * network error, a 5xx, a 429): the start is idempotent per chat id, and a first send waits on
   * it (a reload while it is out relies on that: see `SessionChatTransport.#noteUnsent`).
   * Refusals (401, 403, a closed session) are not retried, and no attempt starts once
   * `callbackTimeoutMs` has passed since the first (a start that timed out: the user has waited
   * long enough).
   */
  async #startWithRetries(): Promise<StartSessionResult> {
    const { retry, env } = this.#context;
    const started = env.now();
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#callStartSession();
      } catch (error) {
        const transient = isDurableChatError(error) && isTransientCallbackError(error);
        if (!transient || attempt >= retry.maxAttempts || env.now() - started >= retry.callbackTimeoutMs)
          throw error;
        await sleep(env, backoffDelay(attempt, retry, env.random()));
      }
    }
  }

  /** The app's `startSession`, bounded in time; a closed session marks the chat closed. */
  async #callStartSession(): Promise<StartSessionResult> {
    try {
      const result = await callbackWithTimeout(
        this.#context.env,
        () =>
          this.#options.startSession({
            chatId: this.chatId,
            taskIdentifier: this.#options.taskIdentifier,
            clientData: this.#options.clientData,
          }),
        this.#context.retry.callbackTimeoutMs,
        'startSession',
      );
      if (isInspected()) {
        const note: InspectionNote = {
          type: 'session-started',
          sessionId: result.sessionId,
          isCached: result.isCached,
          currentRunId: result.currentRunId,
          token: tokenFacts(readTokenClaims(String(result.publicAccessToken))),
        };
        inspectNote(this.chatId, note, this.#context.env.now());
      }
      return result;
    } catch (error) {
      this.#noteClosed(error);
      if (isDurableChatError(error)) throw error;
      // The app's own failure (any value): typed, retryable, its message only in `cause`.
      throw new ConnectionError({
        code: 'TOKEN_UNAVAILABLE',
        message: "the app's startSession failed; see this error's cause",
        cause: error,
      });
    }
  }

  #noteClosed(error: unknown): void {
    if (isDurableChatError(error) && error.code === 'SESSION_CLOSED') {
      const reason = (error as { closedReason?: unknown }).closedReason;
      this.markClosed(
        typeof reason === 'string' ? reason : null,
        error instanceof SessionClosedError ? error : undefined,
      );
    }
  }

  async #fetchToken(): Promise<string> {
    const { getAccessToken } = this.#options;
    if (getAccessToken === undefined) return (await this.#callStartSession()).publicAccessToken;
    try {
      const token = await callbackWithTimeout(
        this.#context.env,
        () => getAccessToken({ chatId: this.chatId }),
        this.#context.retry.callbackTimeoutMs,
        'getAccessToken',
      );
      if (isInspected()) {
        const facts = tokenFacts(readTokenClaims(String(token)));
        inspectNote(this.chatId, { type: 'token-fetched', token: facts }, this.#context.env.now());
      }
      return token;
    } catch (error) {
      this.#noteClosed(error);
      throw error;
    }
  }

  async #hydrate(): Promise<void> {
    await this.#persistence?.restore((token) => this.#context.tokens.adopt(token, 'session-start', false));
    this.store.setState({ hydrated: true });
  }
}
