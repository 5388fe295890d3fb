import type { UIMessageChunk } from 'ai';
import type { SessionClient } from '../client/session-client.js';
import { TurnRejectedError } from '../errors/connection-error.js';
import { isDurableChatError } from '../errors/durable-chat-error.js';
import { StreamDisconnectedError } from '../errors/stream-disconnected-error.js';
import { CONTROL } from '../protocol/headers.js';
import type { ClassifiedRecord, ControlRecord } from '../protocol/records.js';
import { ChunkOutbox } from './chunk-outbox.js';
import { EmittedLog } from './emitted-log.js';

/**
 * `send`: a turn this page just appended. Chunks are held until the reader reaches the live
 * edge, so records of earlier turns (a stale or trimmed cursor) never reach the chat; an
 * earlier turn's turn-complete discards what was held. `expectLeftovers`: an earlier turn
 * was still live (stopped, or never read to its end): hold until its turn-complete arrives.
 * `replay`: a resumed turn. `knownStart`: reading from the turn's own start cursor;
 * otherwise from an older cursor, holding chunks until the live edge shows which turn is live.
 */
export type TurnMode =
  | { type: 'send'; trigger: 'submit-message' | 'regenerate-message' | 'action'; expectLeftovers: boolean }
  | { type: 'replay'; knownStart: boolean };

export interface TurnStreamOptions {
  client: SessionClient;
  from: number | undefined;
  mode: TurnMode;
  peekSettled: boolean;
  /** When the send began (epoch ms, the client's clock): the `first-chunk` event measures from it. */
  startedAt: number;
  /** Called once when the stream is cancelled by its consumer (not by `stop()`). */
  onCancel?: () => void;
}

/** Structural chunks; anything else counts as content (a turn with none after a submit is rejected). */
/** Chunks queued for a slow consumer before the `.out` read pauses. */
const QUEUE_HIGH_WATER_MARK = 256;

const STRUCTURAL = new Set(['start', 'start-step', 'finish-step', 'finish', 'message-metadata', 'abort']);

/**
 * One turn's chunks as a `ReadableStream<UIMessageChunk>`: reads `.out` from a cursor,
 * forwards data chunks and ends at the turn's own turn-complete. Records are handled
 * synchronously as they arrive (no per-chunk promise), which keeps the hot path cheap.
 */
export class TurnStream {
  readonly stream: ReadableStream<UIMessageChunk>;
  /** Resolves with the peek verdict once the first `.out` connection answers. */
  readonly firstResponse: Promise<boolean>;
  private readonly controller: ReadableStreamDefaultController<UIMessageChunk>;
  /** Chunks beyond the stream's high-water mark (a backlog released at once) wait here. */
  private readonly outbox: ChunkOutbox<UIMessageChunk>;
  private readonly abort = new AbortController();
  private resolveFirstResponse: (settled: boolean) => void = () => {};
  private appendPending: boolean;
  private appendSeq: number | undefined;
  private queued: ClassifiedRecord[] = [];
  private holding: boolean;
  /** Send mode: an earlier turn's turn-complete must pass before held chunks can be ours. */
  private awaitingEarlierTurn: boolean;
  /** A tail that arrived while the append was pending, applied once it resolves. */
  private queuedCaughtUp = false;
  private held: UIMessageChunk[] = [];
  private completed: { chunks: UIMessageChunk[]; record: ControlRecord } | undefined;
  private content = false;
  /** What was emitted so far: after `upgrade-required` the new run re-streams the turn from its start. */
  private readonly emitted = new EmittedLog();
  private restartIndex: number | undefined;
  private firstChunkSeen = false;
  private ended = false;
  private turnCompleted = false;
  /** Nobody will read the stream (a settled peek drains in the background): drop chunks. */
  private detached = false;
  private resumeProducer: (() => void) | undefined;

  constructor(private readonly options: TurnStreamOptions) {
    const { mode } = options;
    this.appendPending = mode.type === 'send';
    this.holding = mode.type === 'send' || !mode.knownStart;
    this.awaitingEarlierTurn = mode.type === 'send' && mode.expectLeftovers;
    let captured: ReadableStreamDefaultController<UIMessageChunk> | undefined;
    this.stream = new ReadableStream<UIMessageChunk>(
      {
        start: (controller) => {
          captured = controller;
        },
        pull: () => {
          this.outbox.drain();
          if (!this.outbox.pending) this.wakeProducer();
        },
        cancel: () => {
          this.outbox.clear();
          if (this.ended) return;
          this.ended = true;
          this.abort.abort();
          this.wakeProducer();
          options.onCancel?.();
        },
      },
      // Bounded: a consumer that falls behind pauses the network read instead of piling up.
      { highWaterMark: QUEUE_HIGH_WATER_MARK, size: () => 1 },
    );
    if (captured === undefined) throw new Error('ReadableStream did not call start synchronously');
    this.controller = captured;
    this.outbox = new ChunkOutbox(captured);
    this.firstResponse = new Promise((resolve) => {
      this.resolveFirstResponse = resolve;
    });
  }

  /** True until the turn's own turn-complete has been read. */
  get live(): boolean {
    return !this.turnCompleted;
  }

  get finished(): boolean {
    return this.ended;
  }

  /** Starts reading `.out`. In send mode records queue until `appendDone()`. */
  start(): void {
    const { client, from, peekSettled } = this.options;
    client
      .read(
        { from, peekSettled, signal: this.abort.signal },
        {
          onRecord: (record) => {
            if (this.appendPending) {
              this.queued.push(record);
              return undefined;
            }
            return this.handle(record);
          },
          onTail: (caughtUp) => {
            if (this.appendPending) this.queuedCaughtUp = caughtUp;
            else if (caughtUp) this.caughtUp();
          },
          onFirstResponse: (settled) => this.resolveFirstResponse(settled),
          waitForCapacity: () => this.waitForCapacity(),
        },
      )
      .then(
        () => {
          this.resolveFirstResponse(true);
          this.close();
        },
        (error: unknown) => {
          this.resolveFirstResponse(false);
          this.fail(error);
        },
      );
  }

  /** The append was stored (with its `.in` seq when known): queued records are processed now. */
  appendDone(seq: number | undefined): void {
    this.appendSeq = seq;
    this.appendPending = false;
    const queued = this.queued;
    this.queued = [];
    for (const record of queued) {
      if (this.ended || this.handle(record) === true) {
        if (!this.ended) this.abort.abort();
        return;
      }
    }
    if (this.queuedCaughtUp) this.caughtUp();
  }

  /** Ends the stream now (stop, or a newer stream for the same chat); the reader is released. */
  stop(): void {
    this.abort.abort();
    this.close();
    this.wakeProducer();
  }

  /**
   * Ends the stream because this page lets go of it (a newer reader for the chat, a
   * disconnect, `close()`), not because the user stopped: a turn still live ends with a
   * `StreamDisconnectedError`, never as a silent completion. The agent keeps going.
   */
  release(): void {
    this.abort.abort();
    if (this.live && !this.ended) {
      this.ended = true;
      this.wakeProducer();
      this.outbox.clear();
      this.controller.error(
        new StreamDisconnectedError({ detail: 'this reader was released; resume to continue' }),
      );
      return;
    }
    this.close();
  }

  /** The stream will not be read (a settled reconnect): keep reading to move the cursor, drop chunks. */
  detach(): void {
    this.detached = true;
    this.outbox.discard();
    this.wakeProducer();
  }

  private waitForCapacity(): Promise<void> | undefined {
    if (this.ended || this.detached) return undefined;
    const size = this.controller.desiredSize;
    if (size === null || (size > 0 && !this.outbox.pending)) return undefined;
    return new Promise<void>((resolve) => {
      this.resumeProducer = resolve;
    });
  }

  private wakeProducer(): void {
    const resume = this.resumeProducer;
    this.resumeProducer = undefined;
    resume?.();
  }

  private handle(record: ClassifiedRecord): boolean | undefined {
    if (record.kind === 'data') {
      if (this.holding) this.held.push(record.chunk);
      else if (this.restartIndex === undefined || !this.isRestreamed(record.chunk)) this.emit(record.chunk);
      return undefined;
    }
    if (record.kind !== 'control') return undefined;
    if (record.control === CONTROL.turnComplete) return this.onTurnComplete(record);
    if (record.control === CONTROL.upgradeRequired) {
      this.options.client.emit({
        type: 'upgrade-required',
        chatId: this.options.client.chatId,
        seqNum: record.seqNum,
      });
      // The swapped-in run answers the turn again from its start: drop what it repeats.
      if (this.holding) this.held = [];
      else if (this.emitted.length > 0) this.restartIndex = 0;
    }
    // Unknown control names (header or legacy `trigger:*` form) are dropped.
    return undefined;
  }

  private onTurnComplete(record: ControlRecord): boolean | undefined {
    const { mode, client } = this.options;
    if (mode.type === 'send') {
      const inEventId = record.sessionInEventId;
      const ours =
        this.appendSeq !== undefined && inEventId !== undefined
          ? inEventId >= this.appendSeq
          : !this.awaitingEarlierTurn;
      if (!ours) {
        // An earlier turn ended here: what was held belongs to it; ours starts after this record.
        this.held = [];
        this.awaitingEarlierTurn = false;
        client.store.setState({ turnStartCursor: record.seqNum });
        return undefined;
      }
    } else if (this.holding) {
      this.completed = { chunks: this.held, record };
      this.held = [];
      return undefined;
    }
    this.flushHeld();
    this.finishTurn(record);
    return true;
  }

  /**
   * After an upgrade, a chunk equal to the one emitted at the same position is a repeat
   * (a `start` matches whatever its message id: the message keeps the id it was shown with).
   * The first difference ends the comparison and everything from there is emitted.
   */
  private isRestreamed(chunk: UIMessageChunk): boolean {
    const index = this.restartIndex ?? 0;
    const same = this.emitted.matches(index, chunk);
    this.restartIndex = same ? index + 1 : undefined;
    return same;
  }

  /** The reader reached the live edge: what is held now is the live turn's. */
  private caughtUp(): void {
    if (!this.holding || this.awaitingEarlierTurn || this.ended) return;
    this.holding = false;
    if (this.held.length > 0) {
      this.flushHeld();
      return;
    }
    const completed = this.completed;
    if (completed === undefined) return;
    // Not settled at peek time, nothing after the last turn-complete now: that turn ended meanwhile.
    this.emitAll(completed.chunks);
    this.finishTurn(completed.record);
    this.abort.abort();
  }

  private flushHeld(): void {
    const held = this.held;
    this.held = [];
    this.emitAll(held);
  }

  /** A backlog: handed to the stream as it makes room, never all at once (see `ChunkOutbox`). */
  private emitAll(chunks: UIMessageChunk[]): void {
    if (this.ended || chunks.length === 0) return;
    for (const chunk of chunks) this.note(chunk);
    if (!this.detached) this.outbox.pushAll(chunks);
  }

  private emit(chunk: UIMessageChunk): void {
    if (this.ended) return;
    this.note(chunk);
    if (!this.detached) this.outbox.push(chunk);
  }

  /** Bookkeeping for a chunk about to be emitted: first-chunk event, content flag, dedupe log. */
  private note(chunk: UIMessageChunk): void {
    if (!this.firstChunkSeen) {
      this.firstChunkSeen = true;
      const { client, startedAt } = this.options;
      client.emit({ type: 'first-chunk', chatId: client.chatId, ms: client.environment.now() - startedAt });
    }
    if (!this.content && !STRUCTURAL.has(chunk.type)) this.content = true;
    this.emitted.record(chunk);
  }

  private finishTurn(record: ControlRecord): void {
    const { client, mode } = this.options;
    this.turnCompleted = true;
    client.store.setState({ turnLive: false, turnStartCursor: undefined });
    const rejected = mode.type === 'send' && mode.trigger === 'submit-message' && !this.content;
    client.emit({ type: 'turn-completed', chatId: client.chatId, seqNum: record.seqNum, rejected });
    if (rejected) this.fail(new TurnRejectedError());
    else this.close();
  }

  private close(): void {
    if (this.ended) return;
    this.ended = true;
    this.outbox.close();
    this.wakeProducer();
  }

  private fail(error: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.wakeProducer();
    this.outbox.clear();
    let reported = error;
    if (isDurableChatError(error) && error.code === 'STREAM_DISCONNECTED') {
      reported = new StreamDisconnectedError({ detail: error.message, cause: error });
    }
    if (isDurableChatError(error)) {
      const { client } = this.options;
      client.emit({ type: 'error', chatId: client.chatId, error, fatal: true });
    }
    this.controller.error(reported);
  }
}
