import { ConnectionError } from '../errors/connection-error.js';
import { type DurableChatError, isDurableChatError } from '../errors/durable-chat-error.js';
import {
  httpErrorFromResponse,
  RateLimitedError,
  ServerError,
  SessionClosedError,
} from '../errors/http-error.js';
import { EVENT_STREAM, CLIENT_HEADER as HEADER } from '../protocol/headers.js';
import { type ClassifiedRecord, classifyRecord } from '../protocol/records.js';
import { createOutStreamDecoder, type OutStreamEvent } from '../protocol/sse-decoder.js';
import type { StreamTail } from '../protocol/types.js';
import type { ClientContext } from './client-context.js';
import { sleep } from './environment.js';
import type { ReconnectReason } from './events.js';
import {
  fetchWithTimeout,
  isAbortError,
  isTransientCallbackError,
  joinUrl,
  mergeHeaders,
  networkError,
  readJsonBody,
} from './http.js';
import { inspectNote, isInspected } from './inspection.js';
import { refusedFreshToken } from './refused-fresh-token.js';
import { backoffDelay, rateLimitDelay } from './retry-policy.js';
import { SeqGuard } from './seq-guard.js';

export interface OutReadHandlers {
  /**
   * Called synchronously for each new record, in `seq_num` order, after de-duplication.
   * Return `true` to stop reading: that record counts as processed, later ones do not.
   */
  onRecord(record: ClassifiedRecord): boolean | undefined;
  /** The first record after `cursor` is `firstSeqNum > cursor + 1`: the bookmark was trimmed. */
  onTrimmed?(cursor: number, firstSeqNum: number): void;
  /**
   * Called after each batch and on pings that carry a tail; `caughtUp` means no record is
   * pending (a batch without a tail counts as caught up: the server sent what it had).
   * `edge` is the highest `seq_num` known to exist (-1: none); `batch` is false for pings.
   */
  onTail?(caughtUp: boolean, edge: number, batch: boolean): void;
  /** The first connection answered; `settled` is the peek-mode verdict. */
  onFirstResponse?(settled: boolean): void;
  /**
   * Backpressure: called after each network read; a returned promise pauses reading until
   * it resolves (the consumer has room again). A pause never counts as a stall.
   */
  waitForCapacity?(): Promise<void> | undefined;
  /** A connection answered 200 (`true`) or ended (`false`): liveness checks need to know. */
  onConnection?(open: boolean): void;
  /**
   * The chat's session was replaced after a 404 (see `SessionClient.replaceSession`): the
   * read goes on from the new `.out`'s start; `seq_num`s start over.
   */
  onSessionReplaced?(): void;
  /**
   * Once per network read that brought at least one batch (pings excluded), with the time
   * of that read: activity is noted per read, not per batch, so a stream of one-record
   * batches pays for one clock read per read.
   */
  onBatches?(at: number): void;
  /**
   * A cursor jump was contradicted (see `SeqGuard`): the read goes back to `cursor` and fails.
   * Records past it that were handed on but not yet used should be dropped.
   */
  onRewind?(cursor: number | undefined): void;
}

export interface OutReadOptions {
  /** Last `seq_num` already processed; `undefined` reads from the start of `.out`. */
  from: number | undefined;
  /** Sends `X-Peek-Settled: 1` on the first connection (reconnect paths only). */
  peekSettled?: boolean;
  signal?: AbortSignal;
  /**
   * The controller behind `signal`, when the caller made it for this read alone: the client
   * aborts it directly on `close()` instead of chaining one more controller to it.
   */
  controller?: AbortController;
  /**
   * Write the cursor to the store after each batch (default true). `readOut` turns it off
   * and advances the cursor as its consumer takes records instead.
   */
  trackCursor?: boolean;
}

/** A long poll held this long before its `[DONE]` ended normally, whatever length was asked for. */
const HELD_POLL_MS = 10_000;
/** Why a read ended without an error. */
export type OutReadEnd = 'stopped' | 'settled' | 'aborted';

type ConnectionEnd = 'done' | 'error-event' | 'drop' | 'stall' | 'stopped';

/**
 * The connection loop's phases, one at a time. Failures that retrying cannot mend (a fresh
 * token refused, a closed session, a refusal that is not retryable, too many attempts in a
 * row) are thrown from whichever phase meets them and end the read.
 *
 * | phase \ event | 2xx answer | 401 / 403 | 404 | retryable refusal, network error | connection ends | wait over | abort, handler stop, settled peek |
 * |---|---|---|---|---|---|---|---|
 * | connecting | open | connecting (one token refresh) | connecting (the session replaced once) | backoff | – | – | ended |
 * | open | – | – | – | – | `[DONE]` after a held poll: connecting; drop, stall, `error` event, early `[DONE]`: backoff | – | ended |
 * | backoff | – | – | – | – | – | connecting | ended |
 * | ended | – | – | – | – | – | – | – |
 */
type ReadPhase =
  | { type: 'connecting' }
  | { type: 'open'; openedAt: number }
  | { type: 'backoff'; reason: ReconnectReason; delayMs: number }
  | { type: 'ended'; end: OutReadEnd };

const ALLOWED: Record<ReadPhase['type'], readonly ReadPhase['type'][]> = {
  connecting: ['open', 'connecting', 'backoff', 'ended'],
  open: ['connecting', 'backoff', 'ended'],
  backoff: ['connecting', 'ended'],
  ended: [],
};

/** Carried from one attempt to the next. */
interface Attempts {
  /** Failed attempts in a row without a new record. */
  failures: number;
  /** The token was refreshed after a refusal, and no connection opened since. */
  authRetried: boolean;
  /** A 429's reset and the server's clock, for the wait after it. */
  rateLimitResetAt: number | undefined;
  serverDate: number | undefined;
  /** No connection opened yet (status `connecting`; the peek goes with the first). */
  first: boolean;
  replacedOnce: boolean;
  /** The session generation this read's cursor belongs to. */
  generation: number;
}

/**
 * Reads `.out` from a cursor until the handler stops it, the signal aborts or (peek mode)
 * the stream is settled. Drops, `[DONE]`, `error` events and stalls reconnect with
 * `Last-Event-ID` = the last processed `seq_num`; records at or below it are dropped, so a
 * replay never repeats one. Gives up with `STREAM_DISCONNECTED` after
 * `maxReconnectAttempts` reconnects in a row without a new record.
 */
export class OutReader {
  #cursor: number | undefined;
  #stopped = false;
  #progressed = false;
  #droppedAt: number | undefined;
  #firstOfConnection = true;
  #endSeen: 'done' | 'error-event' | undefined;
  /** A batch arrived in the current network read. */
  #batchInRead = false;
  readonly #seqGuard: SeqGuard;
  #state: ReadPhase = { type: 'connecting' };
  /** What the attempts so far decided for the next ones (see `ReadPhase`). */
  readonly #attempts: Attempts;
  readonly #context: ClientContext;
  readonly #options: OutReadOptions;
  readonly #handlers: OutReadHandlers;

  constructor(context: ClientContext, options: OutReadOptions, handlers: OutReadHandlers) {
    this.#context = context;
    this.#options = options;
    this.#handlers = handlers;
    this.#cursor = options.from;
    this.#attempts = {
      failures: 0,
      authRetried: false,
      rateLimitResetAt: undefined,
      serverDate: undefined,
      first: true,
      replacedOnce: false,
      generation: context.sessionGeneration(),
    };
    this.#seqGuard = new SeqGuard(context, {
      get: () => this.#cursor,
      set: (to) => {
        this.#cursor = to;
        handlers.onRewind?.(to);
      },
    });
  }

  async run(): Promise<OutReadEnd> {
    try {
      for (;;) {
        const state = this.#state;
        switch (state.type) {
          case 'connecting':
            this.#to(await this.#connectOnce());
            break;
          case 'backoff':
            this.#to(await this.#waitOut(state));
            break;
          case 'open':
            // Left inside `connectOnce`, which owns the connection.
            throw new Error('out-reader: the loop met an open connection');
          case 'ended':
            return state.end;
        }
      }
    } catch (error) {
      if (this.#state.type !== 'ended') this.#state = { type: 'ended', end: 'aborted' };
      throw error;
    }
  }

  /** Moves to `next` along the transition table of `ReadPhase`. */
  #to(next: ReadPhase): void {
    const from = this.#state.type;
    if (!ALLOWED[from].includes(next.type))
      throw new Error(`out-reader: no transition from ${from} to ${next.type}`);
    this.#state = next;
  }

  #ended(end: OutReadEnd): ReadPhase {
    return { type: 'ended', end };
  }

  /**
   * One connection attempt, from its token to its end: `open` while its body is read, then the
   * phase it leads to. Failures that retrying cannot mend are thrown (the read fails).
   */
  async #connectOnce(): Promise<ReadPhase> {
    const context = this.#context;
    const options = this.#options;
    const attempts = this.#attempts;
    const { store, env } = context;
    const aborted = this.#checkAborted();
    if (aborted !== undefined) return this.#ended(aborted);
    if (context.sessionGeneration() !== attempts.generation) {
      attempts.generation = context.sessionGeneration();
      this.#cursor = undefined;
      this.#handlers.onSessionReplaced?.();
    }
    const first = attempts.first;
    if (first) store.setState({ status: { type: 'connecting' } });
    const connection = new AbortController();
    const onAbort = () => connection.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const token = await context.tokens.get();
      const response = await this.#connect(token, first && options.peekSettled === true, connection);
      if (!response.ok || response.body === null) return await this.#refused(response);
      // Only an answer to this read's own peek: a server that says it elsewhere (after a
      // send, where the turn has not begun) would end the read before its reply.
      const peeked = first && options.peekSettled === true;
      const settled = peeked && response.headers.get(HEADER.sessionSettled) === 'true';
      if (first) this.#handlers.onFirstResponse?.(settled);
      attempts.first = false;
      attempts.authRetried = false;
      store.setState({ status: { type: 'streaming' } });
      context.emit({ type: 'stream-connected', chatId: context.chatId, cursor: this.#cursor });
      this.#progressed = false;
      const openedAt = env.now();
      this.#to({ type: 'open', openedAt });
      this.#handlers.onConnection?.(true);
      let end: ConnectionEnd;
      try {
        end = await this.#pump(response.body, connection);
      } finally {
        this.#handlers.onConnection?.(false);
      }
      const refuted = this.#seqGuard.takeFailure();
      if (refuted !== undefined) throw this.#fail(refuted);
      const abortedNow = this.#checkAborted();
      if (abortedNow !== undefined) return this.#ended(abortedNow);
      if (end === 'stopped') return this.#ended(this.#finish('stopped'));
      if (settled) return this.#ended(this.#finish('settled'));
      if (this.#progressed) attempts.failures = 0;
      // `[DONE]` after the server held the long poll is its normal end, not a failure:
      // reconnect at once, and never count it. One that comes back early with nothing
      // (a server that ignores Timeout-Seconds) counts, so it cannot spin; one held 10 s (a
      // server or proxy that caps polls below the asked length) cannot spin either, and a
      // long silence of the agent (a tool call) must not use up the reconnects.
      const held = Math.min((context.streamTimeoutSeconds * 1000) / 2, HELD_POLL_MS);
      if (end === 'done' && (this.#progressed || env.now() - openedAt >= held)) {
        context.emit({
          type: 'stream-reconnecting',
          chatId: context.chatId,
          attempt: 0,
          delayMs: 0,
          reason: 'done',
        });
        return { type: 'connecting' };
      }
      return this.#backoff(end);
    } catch (error) {
      const abortedNow = this.#checkAborted();
      if (abortedNow !== undefined) return this.#ended(abortedNow);
      // The app's token endpoint failing for a moment (whoever typed it), or a connect that
      // timed out, is one more failed attempt, not the end.
      if (isDurableChatError(error) && !isTransientCallbackError(error)) throw this.#fail(error);
      this.#report(isDurableChatError(error) ? error : networkError('read .out', error));
      return this.#backoff('network');
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
    }
  }

  /** A connection answered with an error status: refresh, replace, wait, or fail. */
  async #refused(response: Response): Promise<ReadPhase> {
    const context = this.#context;
    const attempts = this.#attempts;
    const { status } = response;
    // A refusal that ends the read says why in its body (409: the session's `closedReason`); a
    // retried one (5xx, 429, a token to refresh) is not waited for.
    const final = status >= 400 && status < 500 && status !== 429 && status !== 401 && status !== 403;
    const body = final
      ? await readJsonBody(response, context.env, context.retry.connectTimeoutMs)
      : undefined;
    const failure = httpErrorFromResponse({
      status,
      operation: 'read .out',
      headers: response.headers,
      body,
    });
    if (!final) await response.body?.cancel().catch(() => undefined);
    if (failure.status === 401 || failure.status === 403) {
      // One refresh per refusal; a fresh token refused again is final.
      if (attempts.authRetried) throw this.#fail(refusedFreshToken(failure, context.store.getState().token));
      await context.tokens.refresh('unauthorized');
      attempts.authRetried = true;
      return { type: 'connecting' };
    }
    if (failure instanceof SessionClosedError) {
      context.markClosed(failure);
      throw failure;
    }
    if (failure.code === 'NOT_FOUND' && !attempts.replacedOnce) {
      // The server does not know the session (any more): read the one startSession gives
      // (unless another request of this chat replaced it while this one was out).
      attempts.replacedOnce = true;
      if (context.sessionGeneration() === attempts.generation) await context.replaceSession();
      return { type: 'connecting' };
    }
    if (!failure.retryable) throw this.#fail(failure);
    if (failure instanceof RateLimitedError || failure instanceof ServerError) {
      attempts.rateLimitResetAt = failure.resetAt;
      attempts.serverDate = failure.serverDate;
    }
    return this.#backoff('http');
  }

  /**
   * A failed attempt: counted, and waited out (the server's rate-limit reset, else the
   * backoff). Too many in a row without a new record fail the read.
   */
  #backoff(reason: ReconnectReason): ReadPhase {
    const context = this.#context;
    const attempts = this.#attempts;
    const { env } = context;
    this.#droppedAt ??= env.now();
    attempts.failures++;
    const failures = attempts.failures;
    if (failures > context.retry.maxReconnectAttempts) {
      throw this.#fail(
        new ConnectionError({
          code: 'STREAM_DISCONNECTED',
          message: `.out dropped; ${failures - 1} reconnects in a row brought nothing new`,
        }),
      );
    }
    const resetAt = attempts.rateLimitResetAt;
    const delayMs =
      (resetAt === undefined
        ? undefined
        : rateLimitDelay(failures, resetAt, env.now(), context.retry, env.random(), attempts.serverDate)) ??
      backoffDelay(failures, context.retry, env.random());
    attempts.rateLimitResetAt = undefined;
    return { type: 'backoff', reason, delayMs };
  }

  async #waitOut(phase: ReadPhase & { type: 'backoff' }): Promise<ReadPhase> {
    const context = this.#context;
    const options = this.#options;
    const { env } = context;
    const { delayMs, reason } = phase;
    const attempt = this.#attempts.failures;
    context.store.setState({ status: { type: 'reconnecting', attempt, nextRetryAt: env.now() + delayMs } });
    context.emit({ type: 'stream-reconnecting', chatId: context.chatId, attempt, delayMs, reason });
    try {
      if (delayMs > 0) await sleep(env, delayMs, options.signal);
    } catch {
      const aborted = this.#checkAborted();
      if (aborted !== undefined) return this.#ended(aborted);
    }
    return { type: 'connecting' };
  }

  #connect(token: string, peek: boolean, connection: AbortController): Promise<Response> {
    const context = this.#context;
    const headers: Record<string, string> = {
      [HEADER.authorization]: `Bearer ${token}`,
      [HEADER.accept]: EVENT_STREAM,
      [HEADER.timeoutSeconds]: String(context.streamTimeoutSeconds),
    };
    if (this.#cursor !== undefined) headers[HEADER.lastEventId] = String(this.#cursor);
    if (peek) headers[HEADER.peekSettled] = '1';
    const url = joinUrl(context.baseURL, `/realtime/v1/sessions/${context.sessionPath()}/out`);
    return fetchWithTimeout(
      context.env,
      url,
      { method: 'GET', headers: mergeHeaders(context.headers, headers), signal: connection.signal },
      context.retry.connectTimeoutMs,
      'read .out',
      connection,
      context.chatId,
    );
  }

  /** Reads one connection to its end. Stalls abort it through a timer that re-arms lazily. */
  async #pump(body: ReadableStream<Uint8Array>, connection: AbortController): Promise<ConnectionEnd> {
    const { env, retry } = this.#context;
    const reader = body.getReader();
    const decoder = createOutStreamDecoder(this.#seqGuard.check((event) => this.#onEvent(event)));
    this.#firstOfConnection = true;
    this.#endSeen = undefined;
    let lastByteAt = env.now();
    let stalled = false;
    let paused = false;
    let timer: unknown;
    const check = () => {
      const idle = paused ? 0 : env.now() - lastByteAt;
      if (idle >= retry.stallTimeoutMs) {
        stalled = true;
        connection.abort();
      } else timer = env.setTimeout(check, retry.stallTimeoutMs - idle);
    };
    timer = env.setTimeout(check, retry.stallTimeoutMs);
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) {
          decoder.end();
          break;
        }
        lastByteAt = env.now();
        this.#batchInRead = false;
        decoder.push(value);
        // One store write and one activity note per network read, whatever its batch count.
        this.#flushCursor();
        if (this.#batchInRead) this.#handlers.onBatches?.(lastByteAt);
        if (this.#stopped || this.#endSeen !== undefined) break;
        const pause = this.#handlers.waitForCapacity?.();
        if (pause !== undefined) {
          paused = true;
          await pause;
          paused = false;
          lastByteAt = env.now();
          if (this.#stopped || connection.signal.aborted) break;
        }
      }
    } catch (error) {
      if (stalled) return 'stall';
      if (this.#options.signal?.aborted || this.#stopped) return 'stopped';
      if (!isAbortError(error)) this.#report(networkError('read .out', error));
      return 'drop';
    } finally {
      env.clearTimeout(timer);
      reader.cancel().catch(() => undefined);
      this.#flushCursor();
    }
    if (this.#stopped) return 'stopped';
    return this.#endSeen ?? 'drop';
  }

  #onEvent(event: OutStreamEvent): void {
    if (this.#stopped) return;
    switch (event.type) {
      case 'batch': {
        const records = event.records;
        for (let index = 0; index < records.length; index++) {
          const record = records[index] as (typeof records)[number];
          const seq = record.seq_num;
          const cursor = this.#cursor;
          if (cursor !== undefined && seq <= cursor) continue;
          if (this.#firstOfConnection) {
            this.#firstOfConnection = false;
            if (cursor !== undefined && seq > cursor + 1) this.#trimmed(cursor, seq);
          }
          this.#cursor = seq;
          if (!this.#progressed) this.#onProgress();
          const classified = classifyRecord(record);
          if (classified.kind === 'malformed') this.#report(classified.error);
          else if (classified.kind === 'control' && classified.publicAccessToken !== undefined) {
            this.#context.tokens.adopt(classified.publicAccessToken, 'turn-complete');
          } else if (classified.kind === 'command' && isInspected()) {
            const note = { type: 'command', operation: classified.operation, seqNum: seq } as const;
            inspectNote(this.#context.chatId, note, this.#context.env.now());
          }
          if (this.#handlers.onRecord(classified) === true) {
            this.#stopped = true;
            break;
          }
        }
        this.#batchInRead = true;
        if (this.#stopped) {
          // Whoever stopped the read may look at the store's cursor next: it must be there.
          this.#flushCursor();
          return;
        }
        // A batch without a tail means the server sent what it had: treat it as caught up.
        if (event.tail !== undefined) this.#tail(event.tail, true);
        else this.#handlers.onTail?.(true, this.#cursor ?? -1, true);
        return;
      }
      case 'ping':
        if (event.tail !== undefined) this.#tail(event.tail, false);
        return;
      case 'done':
        this.#endSeen = 'done';
        return;
      case 'error':
        this.#endSeen = 'error-event';
        return;
      case 'protocol-error':
        this.#report(event.error);
        return;
    }
  }

  #onProgress(): void {
    this.#progressed = true;
    if (this.#droppedAt === undefined) return;
    const downtimeMs = this.#context.env.now() - this.#droppedAt;
    this.#droppedAt = undefined;
    this.#context.emit({
      type: 'stream-resumed',
      chatId: this.#context.chatId,
      cursor: this.#cursor,
      downtimeMs,
    });
  }

  #tail(tail: StreamTail, batch: boolean): void {
    const edge = Math.max(tail.seq_num - 1, this.#cursor ?? -1);
    this.#handlers.onTail?.((this.#cursor ?? -1) + 1 >= tail.seq_num, edge, batch);
  }

  #trimmed(cursor: number, firstSeqNum: number): void {
    this.#context.emit({ type: 'trimmed-cursor', chatId: this.#context.chatId, cursor, firstSeqNum });
    this.#handlers.onTrimmed?.(cursor, firstSeqNum);
  }

  /** One store write per network read, never per record; the store's cursor only moves forward. */
  #flushCursor(): void {
    const cursor = this.#cursor;
    if (cursor === undefined || this.#options.trackCursor === false) return;
    const { store } = this.#context;
    const current = store.getState().lastEventId;
    if (current === undefined || cursor > current) store.setState({ lastEventId: cursor });
  }

  #checkAborted(): OutReadEnd | undefined {
    const state = this.#context.store.getState();
    if (state.closed) {
      throw new SessionClosedError({ operation: 'read .out', closedReason: state.closedReason });
    }
    if (this.#options.signal?.aborted) return this.#finish('aborted');
    return undefined;
  }

  #finish(end: OutReadEnd): OutReadEnd {
    const { store } = this.#context;
    if (!store.getState().closed) store.setState({ status: { type: 'idle' } });
    return end;
  }

  #fail(error: DurableChatError): DurableChatError {
    const { store } = this.#context;
    if (!store.getState().closed) store.setState({ status: { type: 'error', error }, lastError: error });
    return error;
  }

  #report(error: DurableChatError): void {
    this.#context.emit({ type: 'error', chatId: this.#context.chatId, error, fatal: false });
  }
}
