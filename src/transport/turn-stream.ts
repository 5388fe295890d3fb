import type { UIMessageChunk } from 'ai';
import { endLiveTurn, updateLiveTurn } from '../client/live-turn.js';
import type { SessionClient } from '../client/session-client.js';
import { TurnRejectedError } from '../errors/connection-error.js';
import { isDurableChatError } from '../errors/durable-chat-error.js';
import { RunGoneError } from '../errors/run-gone-error.js';
import { StreamDisconnectedError } from '../errors/stream-disconnected-error.js';
import { CONTROL } from '../protocol/headers.js';
import type { ClassifiedRecord, ControlRecord } from '../protocol/records.js';
import { ChunkOutbox } from './chunk-outbox.js';
import { appendToQueuedDelta } from './delta-merge.js';
import { EmittedLog } from './emitted-log.js';
import { type GoneReason, TurnLiveness } from './turn-liveness.js';

/**
 * What a send knows about `.out` when its append goes out, so it can tell its own reply
 * from an earlier turn's without the server's `seq` / `session-in-event-id`.
 */
export interface SendAttribution {
  /**
   * Highest `seq_num` known to exist on `.out` before the append (every record at or below
   * it was written before this send). `undefined`: read to the live edge first.
   */
  edge: number | undefined;
  /** A turn was open at the reader's cursor (this page's belief): its rest comes first. */
  openAtCursor: boolean;
  /** Earlier sends whose reply has not begun yet: their `start` chunks come before ours. */
  earlierStarts: number;
  /**
   * With `edge` from this page's own read of the last turn: the `.in` seq this append gets
   * when nothing else was appended since (the last turn-complete's `session-in-event-id`
   * and this page's own appends). Known: records after the edge wait for the append's answer,
   * whose `seq` tells whether another device's input sits between (its turn comes first).
   */
  expectedInSeq?: number;
}

/**
 * `send`: a turn this page appends. `replay`: a resumed turn; `knownStart` reads from the
 * turn's own start cursor, otherwise from an older cursor, holding chunks until the live
 * edge shows which turn is live.
 */
export type TurnMode =
  | {
      type: 'send';
      trigger: 'submit-message' | 'regenerate-message' | 'action';
      attribution: SendAttribution;
      /**
       * A turn of this page's own append, resumed (a remount, a reload): read from its start
       * cursor and told from other inputs' turns by its append's seq (`appendDone`), as its
       * send was; otherwise it ends as a replay does (not live when nothing of it came).
       */
      resumed?: boolean;
    }
  | { type: 'replay'; knownStart: boolean };

/** How a turn stream ended. */
export type TurnOutcome =
  | 'completed' // its own turn-complete
  | 'rejected' // turn-complete with no content after a submit (TURN_REJECTED)
  | 'run-gone' // the run serving it is gone (RUN_GONE)
  | 'failed' // the reader failed (SESSION_CLOSED, STREAM_DISCONNECTED, ...)
  | 'stopped' // the user stopped it
  | 'released' // this page let go (a newer reader, disconnect, close)
  | 'cancelled' // the consumer cancelled the stream
  | 'drained'; // the reader ended by itself (a settled peek)

export interface TurnStreamOptions {
  client: SessionClient;
  from: number | undefined;
  mode: TurnMode;
  peekSettled: boolean;
  /** When the send began (epoch ms, the client's clock): the `first-chunk` event measures from it. */
  startedAt: number;
  /** Called once when the stream is cancelled by its consumer (not by `stop()`). */
  onCancel?: () => void;
  /** Called once when the turn ends, however it ends. */
  onEnd?: (outcome: TurnOutcome) => void;
  /**
   * After an upgrade the new run streams the message under `actual`; the chat keeps showing
   * it as `shown`. Tool approvals and outputs for it must go under `actual`.
   */
  onMessageIdAlias?: (shown: string, actual: string) => void;
  /** See `SessionChatTransportOptions.coalesceDeltas` (default true). */
  coalesceDeltas?: boolean;
  /**
   * Called when this completed turn stops being the chat's live turn (its consumer has every
   * chunk, the chat is open and the stream is read): the chat is not live any more, and an
   * input answered meanwhile may have a turn of its own to go live (the transport's ledger).
   */
  onOver?: () => void;
}

/**
 * A new run took over the turn after `upgrade-required` and its answer differs from what was
 * shown: the message keeps its id (the new run's id is reported as an alias for tool
 * responses), and the new run's part ids that were already used get a suffix.
 */
interface UpgradeCarry {
  generation: number;
  renamed: Map<string, string>;
  closedOld: boolean;
}

/**
 * Why a turn stream's `.out` read is aborted when the stream ends. One shared reason: an
 * abort without one makes a new `AbortError` (a captured stack, formatted again where Node's
 * streams read it) for every chat whose turn ends, a burst when many end together.
 */
const READ_ENDED = new DOMException('the turn stream ended', 'AbortError');

/** Chunks queued for a slow consumer before the `.out` read pauses. */
const STREAM_QUEUE_CAPACITY = 1024;
/** Records held while the append is in flight before the `.out` read pauses. */
const APPEND_QUEUE_LIMIT = 256;
/** With nothing sent this long after the first connection opened, `.out` was empty at the cursor. */
const EMPTY_STREAM_GRACE_MS = 250;

const PART_CHUNKS = new Set([
  'text-start',
  'text-delta',
  'text-end',
  'reasoning-start',
  'reasoning-delta',
  'reasoning-end',
]);

/** Structural chunks; anything else counts as content (a turn with none after a submit is rejected). */
const STRUCTURAL = new Set(['start', 'start-step', 'finish-step', 'finish', 'message-metadata', 'abort']);

/**
 * The turn's lifecycle. Leaving a phase releases what it held; `ended` releases the reader,
 * the liveness timer, the queues and a paused producer, whatever the way out.
 *
 * | phase \ event | edge known (tail) | append stored | data chunk          | turn-complete              | silence / run gone | stop, release, cancel, reader error |
 * |---------------|-------------------|---------------|---------------------|----------------------------|--------------------|-------------------------------------|
 * | locating      | edge fixed; the transport appends → appending | – | moves the edge (not ours) | moves the edge      | –                  | ended                               |
 * | appending     | –                 | streaming (queue replayed) | attributed, emitted | ours? needs the append's seq: queued; else decided | – | ended       |
 * | holding       | streaming (held emitted) | –      | held                | earlier turn: held dropped; replay: kept | ended (RUN_GONE) | ended                         |
 * | streaming     | –                 | –             | attributed, emitted | ours → ended (completed / rejected); earlier → streaming | ended (RUN_GONE) | ended |
 * | ended         | –                 | –             | –                   | –                          | –                  | –                                   |
 */
type Phase =
  | { type: 'locating'; timer: unknown }
  | { type: 'appending'; queued: ClassifiedRecord[]; caughtUp: boolean }
  | {
      type: 'holding';
      held: UIMessageChunk[];
      completed: { chunks: UIMessageChunk[]; record: ControlRecord } | undefined;
    }
  | { type: 'streaming' }
  | { type: 'ended'; outcome: TurnOutcome };

/**
 * One turn's chunks as a `ReadableStream<UIMessageChunk>`: reads `.out` from a cursor,
 * forwards this turn's data chunks and ends at its own turn-complete. Records are handled
 * synchronously as they arrive (no per-chunk promise), which keeps the hot path cheap.
 */
export class TurnStream {
  readonly stream: ReadableStream<UIMessageChunk>;
  /** Resolves with the peek verdict once the first `.out` connection answers. */
  readonly firstResponse: Promise<boolean>;
  /** Send mode: resolves once the live edge is known (the append may go out). */
  readonly edgeKnown: Promise<void>;
  readonly #controller: ReadableStreamDefaultController<UIMessageChunk>;
  /** Chunks beyond the stream's high-water mark (a backlog released at once) wait here. */
  readonly #outbox: ChunkOutbox<UIMessageChunk>;
  readonly #abort = new AbortController();
  #resolveFirstResponse: (settled: boolean) => void = () => {};
  #resolveEdge: () => void = () => {};
  #phase: Phase;
  #failure: unknown;
  // Attribution (send mode).
  #edge: number;
  #cursor: number;
  #earlierOpen: boolean;
  #earlierStarts: number;
  #earlierRestarting = false;
  #appendSeq: number | undefined;
  /** Records after the edge wait for the append's `seq` (see `SendAttribution.expectedInSeq`). */
  #holdUntilStored: boolean;
  /**
   * Another device's input sits between the edge and this append: records are held until a
   * turn-complete shows whose they are (`session-in-event-id` ≥ this: the others' turns are over).
   */
  #othersUntil: number | undefined;
  #othersHeld: UIMessageChunk[] = [];
  /**
   * Locating: the highest `session-in-event-id` of the turn-completes read (`null`: one had
   * none, so nothing can be expected), and the append's expected seq derived from it.
   */
  #locatedInSeq: number | null | undefined;
  #locateExpected: number | undefined;
  /** Locating: the server told the edge (a batch or a tail). */
  #edgeFound = false;
  /** Locating: nothing arrived within the grace, so `.out` was taken for empty at the cursor. */
  #edgeGuessed = false;
  /**
   * Data chunks skipped as an earlier turn's since the last turn-complete, while nothing was
   * shown: if the turn-complete that follows is this send's by seq, they were its reply.
   */
  #skippedAsEarlier: UIMessageChunk[] = [];
  #completedInEventId: number | undefined;
  /** Highest `seq_num` read through the turn-complete and the command records right after it. */
  #cleanEnd: number | undefined;
  /** Another tab of this page's browser is stopping the turn (`noteStoppedElsewhere`). */
  #stoppedElsewhere = false;
  // What was emitted.
  #content = false;
  #firstChunkSeen = false;
  /**
   * Structural chunks (`start`, `start-step`, ...) read before the reply's first content, not
   * handed over yet; `undefined` once content came. The AI SDK adds the assistant message on
   * `start`: a reply stopped (or ended) before any content would stay an empty bubble, which a
   * reload never shows (nothing of it is in the app's transcript, and a replay drops it too).
   */
  #leading: UIMessageChunk[] | undefined = [];
  /** After `upgrade-required` the new run re-streams the turn from its start: compare to this. */
  readonly #emitted = new EmittedLog();
  /** After an upgrade whose new run answers differently: how its chunks are carried on. */
  #carry: UpgradeCarry | undefined;
  /** Text and reasoning parts opened and not yet ended (closed off when a new run takes over). */
  readonly #openParts = new Map<string, 'text' | 'reasoning'>();
  /** Every part id this turn emitted (a new run's part reusing one is renamed). */
  readonly #partIds = new Set<string>();
  /** The message id the first `start` chunk showed. */
  #shownMessageId: string | undefined;
  #turnOver = false;
  #completedAt: number | undefined;
  /** Nobody will read the stream (a settled peek drains in the background): drop chunks. */
  #detached = false;
  /** `stop(true)`: the stream errors with an `AbortError` instead of closing. */
  #stoppedAsAbort = false;
  #resumeProducer: (() => void) | undefined;
  #liveness: TurnLiveness | undefined;
  #connected = false;

  readonly #options: TurnStreamOptions;

  constructor(options: TurnStreamOptions) {
    this.#options = options;
    const { mode } = options;
    this.#cursor = options.from ?? -1;
    if (mode.type === 'send') {
      const { attribution } = mode;
      this.#edge = attribution.edge ?? this.#cursor;
      this.#earlierOpen = attribution.openAtCursor;
      this.#earlierStarts = attribution.earlierStarts;
      // A resumed turn waits for its append's seq (known, or a resend's answer away) before
      // deciding whose records are.
      this.#holdUntilStored =
        mode.resumed === true || (attribution.edge !== undefined && attribution.expectedInSeq !== undefined);
      this.#phase =
        attribution.edge === undefined
          ? { type: 'locating', timer: undefined }
          : { type: 'appending', queued: [], caughtUp: false };
    } else {
      this.#edge = -1;
      this.#earlierOpen = false;
      this.#earlierStarts = 0;
      this.#holdUntilStored = false;
      this.#phase = mode.knownStart
        ? { type: 'streaming' }
        : { type: 'holding', held: [], completed: undefined };
    }
    let captured: ReadableStreamDefaultController<UIMessageChunk> | undefined;
    this.stream = new ReadableStream<UIMessageChunk>(
      {
        start: (controller) => {
          captured = controller;
        },
        pull: () => {
          this.#outbox.drain();
          if (!this.#outbox.pending) this.#wakeProducer();
        },
        cancel: () => {
          if (this.#phase.type === 'ended') {
            this.#outbox.clear();
            return;
          }
          this.#end('cancelled');
          options.onCancel?.();
        },
      },
      // Bounded by the outbox: a consumer that falls behind pauses the network read.
      ChunkOutbox.strategy,
    );
    if (captured === undefined) throw new Error('ReadableStream did not call start synchronously');
    this.#controller = captured;
    this.#outbox = new ChunkOutbox(
      captured,
      STREAM_QUEUE_CAPACITY,
      options.coalesceDeltas === false ? undefined : appendToQueuedDelta,
    );
    this.firstResponse = new Promise((resolve) => {
      this.#resolveFirstResponse = resolve;
    });
    this.edgeKnown = new Promise((resolve) => {
      this.#resolveEdge = resolve;
    });
    if (this.#phase.type !== 'locating') this.#resolveEdge();
  }

  /** True until the turn is over on the server: its own turn-complete, or its run is gone. */
  get live(): boolean {
    return !this.#turnOver;
  }

  get finished(): boolean {
    return this.#phase.type === 'ended';
  }

  /** Nobody reads it: a settled resume that only drains `.out` to move the cursor. */
  get isDetached(): boolean {
    return this.#detached;
  }

  /** True once a chunk of this turn's reply was shown. */
  get started(): boolean {
    return this.#firstChunkSeen;
  }

  /** `seq_num` of the turn's own turn-complete, once read. */
  get completedSeq(): number | undefined {
    return this.#completedAt;
  }

  /**
   * Where `.out` stood when this turn ended, if nothing but command records (a trim) was
   * read past its turn-complete: the next send's live edge, with no read to find it.
   * `undefined` when the reader went past it into another turn's records.
   */
  get endCursor(): number | undefined {
    return this.#cleanEnd;
  }

  /**
   * The `.in` seq this send's append gets when no other input came since the last turn this
   * page read (its own edge, or the edge it located), when known.
   */
  get expectedInSeq(): number | undefined {
    const { mode } = this.#options;
    return (mode.type === 'send' ? mode.attribution.expectedInSeq : undefined) ?? this.#locateExpected;
  }

  /**
   * Send mode: every record at or below this `seq_num` was written before the append (the
   * live edge it found, or was told); a resume of this turn reads from here.
   */
  get edgeCursor(): number | undefined {
    return this.#edge < 0 ? undefined : this.#edge;
  }

  /** A turn resumed from its start (a replay that knows it, or this page's own resumed append). */
  get #resuming(): boolean {
    const { mode } = this.#options;
    return mode.type === 'replay' ? mode.knownStart : mode.resumed === true;
  }

  /** `session-in-event-id` of the turn's own turn-complete, when the server sent one. */
  get completedInSeq(): number | undefined {
    return this.#completedInEventId;
  }

  /** How the stream ended, once it has. */
  get outcome(): TurnOutcome | undefined {
    return this.#phase.type === 'ended' ? this.#phase.outcome : undefined;
  }

  /** The error that ended the stream before the append went out, if any. */
  get error(): unknown {
    return this.#failure;
  }

  /** Starts reading `.out`. */
  start(): void {
    const { client, peekSettled, mode } = this.#options;
    // Locating reads from one record before the cursor, so the server answers at once with
    // a batch (and its tail) instead of waiting for the next ping.
    const from =
      this.#phase.type === 'locating' && this.#options.from !== undefined && this.#options.from > 0
        ? this.#options.from - 1
        : this.#options.from;
    if (mode.type === 'replay') this.#watch();
    client
      .read(
        { from, peekSettled, signal: this.#abort.signal, controller: this.#abort },
        {
          onRecord: (record) => this.#onRecord(record),
          onTail: (caughtUp, edge) => this.#onTail(caughtUp, edge),
          onBatches: (at) => this.#liveness?.activity(at),
          onTrimmed: () => this.#onTrimmed(),
          onFirstResponse: (settled) => this.#resolveFirstResponse(settled),
          onConnection: (open) => this.#onConnection(open),
          onSessionReplaced: () => this.#onSessionReplaced(),
          waitForCapacity: () => this.#waitForCapacity(),
        },
      )
      .then(
        () => {
          this.#resolveFirstResponse(true);
          this.#end('drained');
        },
        (error: unknown) => {
          this.#resolveFirstResponse(false);
          this.#end('failed', error);
        },
      );
  }

  /** Send mode: the append is going out now; later records may be this turn's. */
  appendSent(): void {
    if (this.#phase.type !== 'locating') return;
    this.#options.client.environment.clearTimeout(this.#phase.timer);
    if (typeof this.#locatedInSeq === 'number' && !this.#edgeGuessed) {
      // Records after the edge wait for the append's seq: an input stored before this one
      // whose reply has not begun (a silent turn of another device or tab) answers first.
      this.#locateExpected = this.#locatedInSeq + 1;
      this.#holdUntilStored = true;
    }
    this.#phase = { type: 'appending', queued: [], caughtUp: false };
  }

  /** The append was stored (with its `.in` seq when known): queued records are processed now. */
  appendDone(seq: number | undefined): void {
    if (this.#phase.type !== 'appending') return;
    this.#appendSeq = seq;
    const expected = this.expectedInSeq;
    if (this.#holdUntilStored && seq !== undefined && expected !== undefined && seq > expected) {
      this.#othersUntil = seq - 1;
    } else if (this.#edgeGuessed && this.#holdUntilStored && seq !== undefined && seq > 0) {
      // The edge was a guess: inputs before this one may have turns to come first, until the
      // late batch's turn-complete (at or below the edge) or a later one says otherwise. The
      // chat's first input has none before it: its reply streams as it comes (held, the first
      // message in a chat another tab or page had opened showed nothing until its reply ended).
      this.#othersUntil = seq - 1;
    }
    const { queued, caughtUp } = this.#phase;
    this.#phase = { type: 'streaming' };
    this.#watch();
    for (let index = 0; index < queued.length; index++) {
      const record = queued[index] as ClassifiedRecord;
      if (this.#handle(record) === true) {
        // Read past the turn-complete while the append was unanswered: only a trim keeps the edge.
        for (const later of queued.slice(index + 1)) {
          if (later.kind !== 'command') {
            this.#cleanEnd = undefined;
            break;
          }
          this.#cleanEnd = later.seqNum;
        }
        return;
      }
      if (this.#phase.type !== 'streaming') return;
    }
    if (caughtUp) this.#wakeProducer();
  }

  /**
   * The append is being retried: its answer (and `seq`) is a backoff away, and a reply may
   * already stream. Records are attributed by the edge rules from here, not held for it.
   */
  appendRetrying(): void {
    if (!this.#holdUntilStored) return;
    this.#holdUntilStored = false;
    const phase = this.#phase;
    if (phase.type !== 'appending') return;
    // Release what waited, in order, up to a turn-complete the append's seq must decide.
    const waiting = phase.queued;
    phase.queued = [];
    for (let index = 0; index < waiting.length; index++) {
      const record = waiting[index] as ClassifiedRecord;
      if (phase.queued.length > 0) {
        phase.queued.push(record);
        continue;
      }
      if (this.#handle(record) === true || this.#phase.type !== 'appending') {
        return;
      }
    }
    if (phase.queued.length === 0) this.#wakeProducer();
  }

  /** The append failed (after its retries): the stream errors with that error. */
  appendFailed(error: unknown): void {
    this.#end('failed', error);
  }

  /**
   * Ends the stream now (the user stopped): what was shown stays, the reader is released.
   * `asAbort` (a stop from outside the chat, `transport.stop(chatId)`): the stream errors with
   * an `AbortError`, so the AI SDK reports it as it reports its own `stop()` (`isAbort`).
   */
  stop(asAbort = false): void {
    this.#stoppedAsAbort = asAbort;
    this.#end('stopped');
  }

  /**
   * Another tab is appending `stop` for this turn: a turn-complete without content is then that
   * stop (the spec emits one on stop), not the agent refusing the turn: the stream ends quietly.
   */
  noteStoppedElsewhere(): void {
    this.#stoppedElsewhere = true;
  }

  /** This page's own send (not a resumed one) whose append is not answered yet (it may not have gone out). */
  get ownAppendUnanswered(): boolean {
    const { mode } = this.#options;
    if (mode.type !== 'send' || mode.resumed === true) return false;
    return this.#phase.type === 'locating' || this.#phase.type === 'appending';
  }

  /**
   * Ends the stream because this page lets go of it (a newer reader for the chat, a
   * disconnect, `close()`), not because the user stopped: a turn still live ends with a
   * `StreamDisconnectedError`, never as a silent completion. The agent keeps going.
   */
  release(): void {
    this.#end('released');
  }

  /**
   * This send's reply goes to its consumer only after the resumed replies among `earlier` (turns
   * a send while they streamed left draining) have been handed to theirs: the AI SDK reads the
   * resume's stream and the send's at once, and would otherwise show, and save at the resume's
   * end, the second reply early. An earlier send's reply is not waited for: useChat shows the
   * two in its own order there, and held, a tab following this one (useChat, React 18, ai 7)
   * never showed the second reply.
   */
  showAfter(earlier: readonly TurnStream[]): void {
    const resumed = earlier.filter((turn) => turn.#resumes);
    if (resumed.length === 0) return;
    const shown = Promise.all(resumed.map((turn) => turn.#outbox.whenDone()))
      // A macrotask more: the consumer of the earlier stream (the AI SDK's request, a relay in
      // between) takes its last chunks and its end in microtasks, and runs its `onFinish` then.
      .then(() => new Promise((resolve) => setTimeout(resolve, 0)));
    this.#outbox.holdUntil(shown, () => {
      if (!this.#outbox.pending) this.#wakeProducer();
    });
  }

  /** A resume's stream (`reconnectToStream`: a replay, or a turn of this page's own send resumed). */
  get #resumes(): boolean {
    const { mode } = this.#options;
    return mode.type === 'replay' || mode.resumed === true;
  }

  /** The stream will not be read (a settled reconnect): keep reading to move the cursor, drop chunks. */
  detach(): void {
    this.#detached = true;
    this.#outbox.discard();
    this.#wakeProducer();
  }

  #watch(): void {
    if (this.#liveness !== undefined || this.#phase.type === 'ended') return;
    this.#liveness = new TurnLiveness(this.#options.client, (reason, silentForMs) =>
      this.#runGone(reason, silentForMs),
    );
    this.#liveness.connection(this.#connected);
    this.#liveness.start();
  }

  #onRecord(record: ClassifiedRecord): boolean | undefined {
    const phase = this.#phase;
    switch (phase.type) {
      case 'locating':
        this.#locate(record);
        return undefined;
      case 'appending':
        if (record.kind === 'command' && phase.queued.length === 0) {
          this.#passCommand(record);
          return undefined;
        }
        if (phase.queued.length > 0 || (this.#holdUntilStored && record.seqNum > this.#edge)) {
          phase.queued.push(record);
          return undefined;
        }
        return this.#handle(record);
      case 'ended':
        return true;
      default:
        return this.#handle(record);
    }
  }

  #onTail(caughtUp: boolean, edge: number): void {
    const phase = this.#phase;
    if (phase.type === 'locating') {
      if (edge > this.#edge) this.#edge = edge;
      if (!this.#edgeGuessed) this.#edgeFound = true;
      this.#resolveEdge();
      return;
    }
    if (phase.type === 'appending') {
      if (phase.queued.length > 0) phase.caughtUp ||= caughtUp;
      return;
    }
    if (phase.type === 'holding' && caughtUp) this.#caughtUp(phase);
  }

  /**
   * A replay from the turn's own start found that start trimmed: `.out` is trimmed only
   * after later turn-completes, so that turn ended long ago. It ends here, empty, instead of
   * showing a later turn's records as its own.
   */
  #onTrimmed(): void {
    const { client } = this.#options;
    if (!this.#resuming || this.#firstChunkSeen) return;
    if (this.#phase.type !== 'streaming') return;
    this.#turnOver = true;
    this.#end('drained');
    endLiveTurn(client.store);
  }

  /**
   * The server no longer knew the session and the client got another (see
   * `SessionClient.replaceSession`). A resumed turn belonged to the old one: nothing of it
   * can come, so it ends, not live. A send's append goes to the new session: its `.out`
   * starts empty, so everything on it from here is this send's.
   */
  #onSessionReplaced(): void {
    const { mode, client } = this.#options;
    if (mode.type === 'replay' || mode.resumed === true) {
      this.#turnOver = true;
      endLiveTurn(client.store);
      this.#end('drained');
      return;
    }
    this.#cursor = -1;
    this.#edge = -1;
    this.#earlierOpen = false;
    this.#earlierStarts = 0;
    this.#earlierRestarting = false;
    this.#othersUntil = undefined;
    this.#othersHeld = [];
    this.#holdUntilStored = false;
    updateLiveTurn(client.store, { startCursor: undefined });
  }

  #onConnection(open: boolean): void {
    this.#connected = open;
    this.#liveness?.connection(open);
    const phase = this.#phase;
    if (!open || phase.type !== 'locating' || phase.timer !== undefined) return;
    // The server sends what it has at once; nothing at all means nothing was there.
    const env = this.#options.client.environment;
    phase.timer = env.setTimeout(() => {
      if (this.#edgeFound) return;
      this.#edgeGuessed = true;
      // With a cursor the server answers at once (with the cursor's own record): silence means
      // a late first batch, not an empty `.out`. A session another page made (`isCached:
      // true`), or a turn the chat's record says is live, may hold inputs whose turns have
      // not begun. Either way records after this edge
      // wait for the append's seq (see `appendDone`), so another device's turn is never shown
      // as this one. Otherwise (a new chat; a route that does not report `isCached`) an empty
      // `.out` is the likely reading, and the reply streams.
      const { client } = this.#options;
      const earlierLive = client.getState().turnLive; // e.g. another tab's turn, via the shared record
      if (this.#options.from !== undefined || client.sessionPreexisted || earlierLive)
        this.#holdUntilStored = true;
      this.#resolveEdge();
    }, EMPTY_STREAM_GRACE_MS);
  }

  /** Before the append goes out, every record is an earlier turn's: it only moves the edge. */
  #locate(record: ClassifiedRecord): void {
    if (record.kind === 'control' && record.control === CONTROL.turnComplete) {
      // The `.in` seq the agent had consumed at the last turn-complete: the next input's seq
      // is one more, unless something (another device's message) was appended since.
      const inSeq = record.sessionInEventId;
      this.#locatedInSeq =
        inSeq === undefined || this.#locatedInSeq === null ? null : Math.max(inSeq, this.#locatedInSeq ?? -1);
    }
    const seq = record.seqNum;
    if (seq <= this.#cursor) return;
    if (seq > this.#edge) this.#edge = seq;
    this.#noteEarlier(record);
  }

  /** Tracks whether an earlier turn is open (its records are not ours). */
  #noteEarlier(record: ClassifiedRecord): void {
    if (record.kind === 'data') {
      // The earlier turn this page expected has started (or had, before the cursor).
      if (this.#earlierStarts > 0 && (record.chunk.type === 'start' || !this.#earlierOpen))
        this.#earlierStarts--;
      this.#earlierOpen = true;
    } else if (record.kind === 'control' && record.control === CONTROL.turnComplete) {
      // A turn with no content (a rejected one) still answers an expected earlier send.
      if (!this.#earlierOpen && this.#earlierStarts > 0) this.#earlierStarts--;
      this.#earlierOpen = false;
    }
  }

  #waitForCapacity(): Promise<void> | undefined {
    const phase = this.#phase;
    if (phase.type === 'ended' || this.#detached) return undefined;
    if (phase.type === 'appending' && phase.queued.length >= APPEND_QUEUE_LIMIT) return this.#pause();
    return this.#outbox.full ? this.#pause() : undefined;
  }

  #pause(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#resumeProducer = resolve;
    });
  }

  #wakeProducer(): void {
    const resume = this.#resumeProducer;
    this.#resumeProducer = undefined;
    resume?.();
  }

  #handle(record: ClassifiedRecord): boolean | undefined {
    if (this.#options.mode.type === 'send') return this.#handleSent(record);
    if (record.kind === 'data') {
      const phase = this.#phase;
      if (phase.type === 'holding') phase.held.push(record.chunk);
      else this.#emitFresh(record.chunk);
      return undefined;
    }
    if (record.kind === 'command') {
      this.#passCommand(record);
      return undefined;
    }
    if (record.kind !== 'control') return undefined;
    if (record.control === CONTROL.turnComplete) {
      const phase = this.#phase;
      if (phase.type === 'holding') {
        phase.completed = { chunks: phase.held, record };
        phase.held = [];
        return undefined;
      }
      this.#finishTurn(record);
      return true;
    }
    if (record.control === CONTROL.upgradeRequired) {
      this.#upgraded(record);
      const phase = this.#phase;
      if (phase.type === 'holding') phase.held = [];
    }
    // Unknown control names (header or legacy `trigger:*` form) are dropped.
    return undefined;
  }

  /**
   * A send's records after the edge: an earlier turn open at the edge (or an earlier send
   * whose reply has not begun) answers first; its chunks are not ours. A `start` while an
   * earlier turn is open, with none of ours pending and no upgrade re-stream, means that
   * turn was abandoned (its run died): our reply begins there.
   */
  #handleSent(record: ClassifiedRecord): boolean | undefined {
    if (record.seqNum <= this.#edge) {
      if (record.seqNum > this.#cursor) this.#noteEarlier(record);
      this.#noteConsumedBeforeEdge(record);
      return undefined;
    }
    if (this.#othersUntil !== undefined) return this.#handleOthersFirst(record);
    if (record.kind === 'data') {
      const chunk = record.chunk;
      if (this.#earlierOpen || this.#earlierStarts > 0) {
        // Kept until a turn-complete tells by seq whose they were (see `skippedAsEarlier`).
        if (!this.#firstChunkSeen) this.#skippedAsEarlier.push(chunk);
        if (chunk.type !== 'start') return undefined;
        if (this.#earlierRestarting) {
          this.#earlierRestarting = false;
          return undefined;
        }
        if (this.#earlierStarts > 0) {
          this.#earlierStarts--;
          this.#earlierOpen = true;
          return undefined;
        }
        this.#earlierOpen = false;
        this.#skippedAsEarlier = [];
      }
      this.#emitFresh(chunk);
      return undefined;
    }
    if (record.kind === 'command') {
      this.#passCommand(record);
      return undefined;
    }
    if (record.kind !== 'control') return undefined;
    if (record.control === CONTROL.turnComplete) {
      const inEventId = record.sessionInEventId;
      const phase = this.#phase;
      if (inEventId !== undefined && phase.type === 'appending') {
        // Whether it answers this send depends on the append's seq: decide once it is known.
        phase.queued.push(record);
        return undefined;
      }
      const provenBySeq = inEventId !== undefined && this.#appendSeq !== undefined;
      const ours = provenBySeq
        ? inEventId >= (this.#appendSeq as number)
        : !this.#earlierOpen && this.#earlierStarts === 0;
      const skipped = this.#skippedAsEarlier;
      this.#skippedAsEarlier = [];
      if (ours && provenBySeq && !this.#firstChunkSeen) {
        // The edge rules took this reply for an earlier turn's (a stopped send that was never
        // stored, a live mark whose run never wrote again); its turn-complete proves by seq
        // that it was this send's: it is shown, late but whole, instead of lost.
        for (const chunk of skipped) this.#emitFresh(chunk);
      }
      if (!ours) {
        if (!this.#earlierOpen && this.#earlierStarts > 0) this.#earlierStarts--; // a turn with no content
        this.#earlierOpen = false;
        this.#earlierRestarting = false;
        this.#liveTurnStartsAfter(record.seqNum, inEventId);
        return undefined;
      }
      this.#finishTurn(record);
      return true;
    }
    if (record.control === CONTROL.upgradeRequired) {
      if (this.#earlierOpen) this.#earlierRestarting = true;
      else this.#upgraded(record);
    }
    return undefined;
  }

  /**
   * A late first batch brings the turn-complete at the (guessed) edge: when the agent had
   * consumed every input before this append there, nothing else comes first.
   */
  #noteConsumedBeforeEdge(record: ClassifiedRecord): void {
    const until = this.#othersUntil;
    if (until === undefined || record.kind !== 'control' || record.control !== CONTROL.turnComplete) return;
    const inEventId = record.sessionInEventId;
    if (inEventId === undefined || inEventId < until) return;
    this.#othersUntil = undefined;
    const held = this.#othersHeld;
    this.#othersHeld = [];
    for (const chunk of held) this.#emitFresh(chunk);
  }

  /**
   * Another device appended between this page's read of the last turn and this append: a
   * turn-complete tells whose the held records were, by its `session-in-event-id`.
   */
  #handleOthersFirst(record: ClassifiedRecord): boolean | undefined {
    if (record.kind === 'data') {
      this.#othersHeld.push(record.chunk);
      return undefined;
    }
    if (record.kind === 'command') {
      this.#passCommand(record);
      return undefined;
    }
    if (record.kind !== 'control') return undefined;
    if (record.control === CONTROL.upgradeRequired) {
      this.#othersHeld = [];
      return undefined;
    }
    if (record.control !== CONTROL.turnComplete) return undefined;
    const inEventId = record.sessionInEventId;
    const held = this.#othersHeld;
    this.#othersHeld = [];
    if (inEventId !== undefined && this.#appendSeq !== undefined && inEventId >= this.#appendSeq) {
      // The agent took this append into the turn it was answering: the whole turn is ours.
      this.#othersUntil = undefined;
      for (const chunk of held) this.#emitFresh(chunk);
      this.#finishTurn(record);
      return true;
    }
    if (inEventId === undefined || inEventId >= (this.#othersUntil as number)) this.#othersUntil = undefined;
    this.#liveTurnStartsAfter(record.seqNum, inEventId);
    return undefined;
  }

  /**
   * A command record (the trim written after a turn-complete) belongs to no turn: right after
   * the edge it moves the edge, and right after the live turn's start cursor it moves that
   * cursor. Otherwise `lastEventId` runs ahead of the start cursor although nothing of the
   * live turn was written, and a page reading the shared record (another tab, a reload) takes
   * that turn for begun: its `start` would then be taken for a new reply's (the abandoned-turn
   * rule). One store read per command record, none per data chunk.
   */
  #passCommand(record: ClassifiedRecord): void {
    const seq = record.seqNum;
    if (seq === this.#edge + 1) this.#edge = seq;
    const { store } = this.#options.client;
    const state = store.getState();
    if (state.turnLive && state.turnStartCursor === seq - 1) updateLiveTurn(store, { startCursor: seq });
  }

  /**
   * Another input's turn ended at `seqNum` before this one's reply: the live turn starts after
   * it, so a resume from there needs neither to read nor to skip it.
   */
  #liveTurnStartsAfter(seqNum: number, inEventId: number | undefined): void {
    const change = { startCursor: seqNum, priorSeq: inEventId };
    updateLiveTurn(
      this.#options.client.store,
      this.#appendSeq === undefined ? change : { ...change, seq: this.#appendSeq },
    );
  }

  #upgraded(record: ControlRecord): void {
    const { client } = this.#options;
    client.emit({ type: 'upgrade-required', chatId: client.chatId, seqNum: record.seqNum });
    // The swapped-in run answers the turn again from its start: drop what it repeats.
    if (this.#carry !== undefined) {
      this.#carry = undefined; // a second upgrade: compare again from the start
      this.#emitted.restart();
    } else if (this.#emitted.length > 0) this.#emitted.restart();
  }

  /**
   * After an upgrade the new run answers the turn again from its start. While its chunks
   * equal what was shown at the same position (a `start` matches whatever its message id),
   * they are repeats and dropped; once it has repeated everything shown, it simply goes on.
   * At the first real difference the new run answers differently: see `emitCarried`.
   */
  #emitFresh(chunk: UIMessageChunk): void {
    if (this.#carry !== undefined) {
      this.#emitCarried(chunk);
      return;
    }
    const emitted = this.#emitted;
    if (!emitted.replaying) {
      this.#emit(chunk);
      return;
    }
    switch (emitted.replay(chunk)) {
      case 'held':
        return;
      case 'repeat':
        // Repeated, but the new run knows the message by its own id.
        for (const repeated of emitted.takeDecided())
          if (repeated.type === 'start') this.#reportAlias(repeated.messageId);
        return;
      case 'past':
        for (const fresh of emitted.takeDecided()) this.#emit(fresh);
        return;
      case 'diverged':
        this.#diverge(emitted.takeDecided());
        return;
    }
  }

  /** The new run answers differently from `chunks[0]` on: see `emitCarried`. */
  #diverge(chunks: UIMessageChunk[]): void {
    this.#carry = { generation: 1, renamed: new Map(), closedOld: false };
    for (const chunk of chunks) this.#emitCarried(chunk);
  }

  #reportAlias(actual: string | undefined): void {
    const shown = this.#shownMessageId;
    if (actual !== undefined && shown !== undefined && actual !== shown) {
      this.#options.onMessageIdAlias?.(shown, actual);
    }
  }

  /**
   * The new run answers differently. What was shown stays (a streamed part cannot be taken
   * back); the first part the new run opens closes the old run's open ones, and the new
   * answer follows in the same message (its `start` is not shown again; its id becomes an
   * alias for tool responses). A new part reusing an old part id gets a suffix.
   */
  #emitCarried(chunk: UIMessageChunk): void {
    const carry = this.#carry as UpgradeCarry;
    if (chunk.type === 'start') {
      this.#reportAlias(chunk.messageId);
      return;
    }
    if (chunk.type === 'text-start' || chunk.type === 'reasoning-start') {
      if (!carry.closedOld) {
        carry.closedOld = true;
        for (const [id, kind] of [...this.#openParts]) {
          this.#emit(kind === 'text' ? { type: 'text-end', id } : { type: 'reasoning-end', id });
        }
      }
      if (this.#partIds.has(chunk.id)) carry.renamed.set(chunk.id, `${chunk.id}~${carry.generation}`);
    }
    if (PART_CHUNKS.has(chunk.type)) {
      const renamed = carry.renamed.get((chunk as { id: string }).id);
      if (renamed !== undefined) {
        this.#emit({ ...chunk, id: renamed } as UIMessageChunk);
        return;
      }
    }
    this.#emit(chunk);
  }

  /** Replay from an older cursor reached the live edge: what is held now is the live turn's. */
  #caughtUp(phase: Phase & { type: 'holding' }): void {
    const { held, completed } = phase;
    this.#phase = { type: 'streaming' };
    if (held.length > 0) {
      this.#emitAll(held);
      return;
    }
    if (completed === undefined) return;
    // Not settled at peek time, nothing after the last turn-complete now: that turn ended meanwhile.
    this.#emitAll(completed.chunks);
    this.#finishTurn(completed.record);
  }

  /** A backlog: handed to the stream as it makes room, never all at once (see `ChunkOutbox`). */
  #emitAll(chunks: UIMessageChunk[]): void {
    if (this.#phase.type === 'ended' || chunks.length === 0) return;
    for (const chunk of chunks) this.#note(chunk);
    if (this.#detached) return;
    if (this.#leading === undefined) this.#outbox.pushAll(chunks);
    else this.#pastLeading(chunks);
  }

  #emit(chunk: UIMessageChunk): void {
    this.#note(chunk);
    if (this.#detached) return;
    if (this.#leading === undefined) this.#outbox.push(chunk);
    else this.#pastLeading([chunk]);
  }

  /**
   * Holds structural chunks while the reply has shown nothing; with its first content, hands over
   * what was held too. A transient data part (a "searching…" status) goes ahead at once: the AI
   * SDK only hands it to `onData`, so it makes no message, and a Stop after it must leave none.
   */
  #pastLeading(chunks: UIMessageChunk[]): void {
    const leading = this.#leading as UIMessageChunk[];
    for (let index = 0; index < chunks.length; index++) {
      const chunk = chunks[index] as UIMessageChunk;
      if (STRUCTURAL.has(chunk.type)) leading.push(chunk);
      else if (chunk.type.startsWith('data-') && (chunk as { transient?: boolean }).transient === true)
        this.#outbox.push(chunk);
      else {
        this.#leading = undefined;
        this.#outbox.pushAll(index === 0 ? leading.concat(chunks) : leading.concat(chunks.slice(index)));
        return;
      }
    }
  }

  /** Bookkeeping for a chunk about to be emitted: first-chunk event, content flag, dedupe log. */
  #note(chunk: UIMessageChunk): void {
    if (!this.#firstChunkSeen) {
      this.#firstChunkSeen = true;
      const { client, startedAt } = this.#options;
      client.emit({ type: 'first-chunk', chatId: client.chatId, ms: client.environment.now() - startedAt });
    }
    if (!this.#content && !STRUCTURAL.has(chunk.type)) this.#content = true;
    this.#emitted.record(chunk);
    // Part bookkeeping for an upgrade's take-over; only part starts and ends pay for it.
    switch (chunk.type) {
      case 'start':
        this.#shownMessageId ??= chunk.messageId;
        break;
      case 'text-start':
        this.#openParts.set(chunk.id, 'text');
        this.#partIds.add(chunk.id);
        break;
      case 'reasoning-start':
        this.#openParts.set(chunk.id, 'reasoning');
        this.#partIds.add(chunk.id);
        break;
      case 'text-end':
      case 'reasoning-end':
        this.#openParts.delete(chunk.id);
        break;
    }
  }

  #finishTurn(record: ControlRecord): void {
    const { client, mode } = this.#options;
    // A re-stream that ends inside a block it was still comparing: what it held is its own.
    if (this.#emitted.replaying) {
      const held = this.#emitted.abandon();
      if (held.length > 0) this.#diverge(held);
    }
    this.#turnOver = true;
    this.#completedAt = record.seqNum;
    this.#completedInEventId = record.sessionInEventId;
    this.#cleanEnd = record.seqNum;
    const rejected =
      mode.type === 'send' &&
      mode.resumed !== true &&
      mode.trigger === 'submit-message' &&
      !this.#content &&
      !this.#stoppedElsewhere;
    client.emit({ type: 'turn-completed', chatId: client.chatId, seqNum: record.seqNum, rejected });
    if (rejected) this.#end('rejected', new TurnRejectedError());
    else this.#end('completed');
  }

  #runGone(reason: GoneReason, silentForMs: number): void {
    if (this.#phase.type === 'ended') return;
    this.#turnOver = true;
    this.#end('run-gone', new RunGoneError({ reason, silentForMs }));
  }

  /** The one way out of every phase: releases the reader, timers, queues and a paused producer. */
  #end(outcome: TurnOutcome, error?: unknown): void {
    const phase = this.#phase;
    if (phase.type === 'ended') return;
    if (phase.type === 'locating') this.#options.client.environment.clearTimeout(phase.timer);
    this.#phase = { type: 'ended', outcome };
    this.#abort.abort(READ_ENDED);
    this.#liveness?.stop();
    this.#resolveEdge();
    this.#wakeProducer();
    this.#othersHeld = [];
    this.#skippedAsEarlier = [];
    const { client } = this.#options;
    this.#options.onEnd?.(outcome);
    switch (outcome) {
      case 'completed': {
        // A reply with nothing to show that finished as the agent meant it (a regenerate answered
        // with metadata only): its `finish` and metadata reach the chat. A stopped one (its
        // `abort`, or no `finish`) leaves no message.
        const held = this.#leading;
        if (
          !this.#detached &&
          !this.#stoppedElsewhere &&
          held?.some((chunk) => chunk.type === 'finish') &&
          !held.some((chunk) => chunk.type === 'abort')
        )
          this.#outbox.pushAll(held);
        this.#leading = undefined;
        // The turn is over for this page only once the consumer has every chunk: a reload
        // before that replays the turn instead of losing its end.
        this.#outbox.close(() => {
          if (this.#detached || client.getState().closed) return;
          this.#options.onOver?.();
        });
        return;
      }
      case 'drained':
        // A resumed turn the peek found settled before any of it showed: it is not live.
        if (
          (this.#options.mode.type === 'replay' || this.#options.mode.resumed === true) &&
          !this.#firstChunkSeen &&
          !client.getState().closed
        )
          endLiveTurn(client.store);
        this.#outbox.close();
        return;
      case 'stopped':
        if (this.#stoppedAsAbort) {
          this.#outbox.clear();
          this.#controller.error(new DOMException('the reply was stopped', 'AbortError'));
          return;
        }
        this.#outbox.close();
        return;
      case 'cancelled':
        this.#outbox.clear();
        return;
      case 'released':
        if (!this.live) {
          this.#outbox.close();
          return;
        }
        this.#outbox.clear();
        this.#controller.error(
          new StreamDisconnectedError({ detail: 'this reader was released; resume to continue' }),
        );
        return;
      case 'rejected':
      case 'run-gone':
      case 'failed':
        this.#fail(error);
        return;
    }
  }

  #fail(error: unknown): void {
    const { client } = this.#options;
    this.#outbox.clear();
    this.#failure = error;
    let reported = error;
    if (isDurableChatError(error) && error.code === 'STREAM_DISCONNECTED') {
      reported = new StreamDisconnectedError({ detail: error.message, cause: error });
    }
    if (isDurableChatError(error) && (error.code === 'TURN_REJECTED' || error.code === 'RUN_GONE')) {
      // The turn is over on the server: nothing to resume.
      endLiveTurn(client.store);
    }
    if (isDurableChatError(error)) client.emit({ type: 'error', chatId: client.chatId, error, fatal: true });
    this.#controller.error(reported);
  }
}
