import { ProtocolError } from '../errors/protocol-error.js';
import type { OutStreamEvent } from '../protocol/sse-decoder.js';
import type { OutRecord, StreamTail } from '../protocol/types.js';
import type { ClientContext } from './client-context.js';

/** A jump of the cursor: the read went from `base` (-1: nothing read) straight to `top`. */
interface Jump {
  base: number;
  top: number;
}

/** Jumps remembered per read: a contradiction arrives soon after its jump, if ever. */
const MAX_JUMPS = 32;

/** The reader's own cursor, which the guard moves back with the stored one. */
export interface GuardedCursor {
  get(): number | undefined;
  set(cursor: number | undefined): void;
}

/**
 * Checks `.out` batches and tails against the cursor jumps this read already took, for
 * servers whose batches carry no `tail` (the decoder refuses a record past its own batch's
 * tail). `seq_num`s only grow, so a jump (a record more than one past the one before it:
 * a trimmed bookmark, or an absurd `seq_num`) is contradicted when a later record lands
 * inside it, or a later tail says the stream never reached its top. Today such a jump
 * silently drops every later record (each looks already seen) and is persisted as the cursor.
 *
 * - A batch that contradicts itself (`[5, 2^53-1, 6]`): refused whole before anything in it
 *   is applied, reported as `MALFORMED_BATCH`, and the connection ends as after the server's
 *   `error` event, so the read resumes from its unmoved cursor.
 * - A batch or tail that contradicts a jump already applied: reported the same way, the
 *   stored cursor goes back to before the jump (so no later read, reload or persisted record
 *   starts past it), and the read fails with that `MALFORMED_BATCH` (`failure`): which of
 *   the records it already handed on were right cannot be known, so it does not guess.
 *
 * A jump that nothing after it contradicts (no later record on any connection of the read,
 * and no tail) cannot be told from a quiet stream: the read waits as for a quiet turn, and
 * the liveness check ends a turn whose run is gone (`RUN_GONE`).
 */
export class SeqGuard {
  #jumps: Jump[] = [];
  #refuted: ProtocolError | undefined;
  #generation: number;
  readonly #context: Pick<ClientContext, 'store' | 'sessionGeneration'>;
  readonly #cursor: GuardedCursor;

  constructor(context: Pick<ClientContext, 'store' | 'sessionGeneration'>, cursor: GuardedCursor) {
    this.#context = context;
    this.#cursor = cursor;
    this.#generation = context.sessionGeneration();
  }

  /** The error that ends the read, once an applied jump was contradicted (taken once). */
  takeFailure(): ProtocolError | undefined {
    const failure = this.#refuted;
    this.#refuted = undefined;
    return failure;
  }

  /** Wraps the decoder's `emit`: what contradicts a jump never reaches the reader. */
  check(emit: (event: OutStreamEvent) => void): (event: OutStreamEvent) => void {
    return (event) => {
      if (this.#refuted !== undefined) return;
      if (this.#context.sessionGeneration() !== this.#generation) {
        // A replaced session's `.out` numbers its records anew: the old jumps say nothing.
        this.#generation = this.#context.sessionGeneration();
        this.#jumps = [];
      }
      if (event.type === 'batch') {
        const jumps = this.#batchJumps(event.records, emit);
        if (jumps === undefined || this.#tailContradicts(event.tail, emit)) return;
        emit(event);
        if (jumps.length > 0) this.#jumps = this.#jumps.concat(jumps).slice(-MAX_JUMPS);
        return;
      }
      if (event.type === 'ping' && this.#tailContradicts(event.tail, emit)) return;
      emit(event);
    };
  }

  /** The jumps `records` take from the cursor, or undefined when they contradict one. */
  #batchJumps(records: OutRecord[], emit: (event: OutStreamEvent) => void): Jump[] | undefined {
    let last = this.#cursor.get() ?? -1;
    let taken: Jump[] | undefined;
    for (const record of records) {
      const seq = record.seq_num;
      if (seq > last) {
        if (seq > last + 1) {
          taken ??= [];
          taken.push({ base: last, top: seq });
        }
        last = seq;
        continue;
      }
      const own = taken?.find((jump) => inside(jump, seq));
      if (own !== undefined) {
        this.#refuse(`seq_num ${seq} comes after ${own.top} in one batch`, seq, emit);
        return undefined;
      }
      const applied = this.#jumps.find((jump) => inside(jump, seq));
      if (applied !== undefined) {
        this.#fail(
          `seq_num ${seq} comes after the jump from ${applied.base} to ${applied.top}`,
          seq,
          applied,
          emit,
        );
        return undefined;
      }
      // Below the cursor and inside no jump: a replay of something already read, skipped.
    }
    return taken ?? NO_JUMPS;
  }

  /** A tail (the next `seq_num` to be written) below a jump's top: the jump never happened. */
  #tailContradicts(tail: StreamTail | undefined, emit: (event: OutStreamEvent) => void): boolean {
    if (tail === undefined || this.#jumps.length === 0) return false;
    // A tail that names the last record instead of the next one is tolerated, as in the decoder.
    const applied = this.#jumps.find((jump) => jump.top > tail.seq_num);
    if (applied === undefined) return false;
    const message = `tail ${tail.seq_num} is below the jump from ${applied.base} to ${applied.top}`;
    this.#fail(message, applied.top, applied, emit);
    return true;
  }

  #refuse(why: string, seqNum: number, emit: (event: OutStreamEvent) => void): void {
    emit({ type: 'protocol-error', error: contradiction(why, seqNum, 'the batch is not applied') });
    emit({ type: 'error', message: 'batch contradicts itself' });
  }

  #fail(why: string, seqNum: number, jump: Jump, emit: (event: OutStreamEvent) => void): void {
    const error = contradiction(why, seqNum, `the cursor goes back to ${jump.base}`);
    const before = jump.base < 0 ? undefined : jump.base;
    const { store } = this.#context;
    const stored = store.getState().lastEventId;
    if (stored !== undefined && stored > jump.base) store.setState({ lastEventId: before });
    this.#cursor.set(before);
    this.#refuted = error;
    emit({ type: 'protocol-error', error });
    emit({ type: 'error', message: 'the stream contradicts a jump of its cursor' });
  }
}

const NO_JUMPS: Jump[] = [];

const inside = (jump: Jump, seq: number) => seq > jump.base && seq < jump.top;

function contradiction(why: string, seqNum: number, outcome: string): ProtocolError {
  return new ProtocolError({ code: 'MALFORMED_BATCH', seqNum, message: `${why}; ${outcome}` });
}
