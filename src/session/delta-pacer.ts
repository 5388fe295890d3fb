import type { UIMessageChunk } from 'ai';
import { continuesDelta, type DeltaChunk, joinDeltas } from '../transport/delta-merge.js';

/**
 * Default render window while a reply streams (ms): the most a text delta is held before
 * it goes to `useChat`. 40 leaves about 10 ms of a 50 ms budget for the AI SDK's reducer
 * and React's commit (bench/scenarios/renders.ts, from a delta's arrival to the commit
 * showing it: p99 40-43 ms with 40; with 50 the p95 was already 48 ms).
 */
export const DEFAULT_RENDER_THROTTLE_MS = 40;

/** The fields the AI SDK's reducer reads from a delta; a chunk with any other field is passed as is. */
const DELTA_FIELDS = new Set(['type', 'id', 'delta', 'providerMetadata']);

function isPlainDelta(chunk: UIMessageChunk): chunk is DeltaChunk {
  if (chunk.type !== 'text-delta' && chunk.type !== 'reasoning-delta') return false;
  for (const key in chunk) if (!DELTA_FIELDS.has(key)) return false;
  return typeof chunk.delta === 'string';
}

/**
 * Decides when the chunks of a reply reach `useChat`, so that it renders at most once per
 * window while text streams, and no delta waits longer than the window.
 *
 * `useChat` (without its own throttle) renders once per chunk it reads. A delta that
 * comes at least `windowMs` after the last one shown goes out at once (the first token
 * is never delayed); one that comes sooner is held and merged with the deltas of the same
 * part that follow, and the merged delta goes out when the window since the last one shown
 * ends. Every other chunk (starts, ends, tools, data, errors, finish) goes out at once,
 * after whatever is held, so order and the final message are exactly as without pacing.
 * With `windowMs` 0 every chunk goes out as it comes.
 */
export class DeltaPacer {
  #held: DeltaChunk | undefined;
  #heldSince = 0;
  #lastShown = Number.NEGATIVE_INFINITY;

  readonly #windowMs: number;

  constructor(windowMs: number) {
    this.#windowMs = windowMs;
  }

  /** The chunks to hand over now (in order) for a chunk read at `now`. */
  offer(chunk: UIMessageChunk, now: number): UIMessageChunk[] {
    if (this.#windowMs <= 0) return [chunk];
    if (!isPlainDelta(chunk)) {
      const out = this.take(now);
      out.push(chunk);
      return out;
    }
    const held = this.#held;
    if (held !== undefined && continuesDelta(held, chunk)) {
      this.#held = joinDeltas(held, chunk);
      return now >= (this.due() ?? now) ? this.take(now) : [];
    }
    const out = this.take(now);
    if (now >= this.#lastShown + this.#windowMs) {
      this.#lastShown = now;
      out.push(chunk);
    } else {
      this.#held = chunk;
      this.#heldSince = now;
    }
    return out;
  }

  /** When the held delta is due (ms on the same clock), or undefined when nothing is held. */
  due(): number | undefined {
    // The hold starts after the last hand-over, unless the clock stepped back (Date.now can).
    return this.#held === undefined ? undefined : Math.min(this.#lastShown, this.#heldSince) + this.#windowMs;
  }

  /** The held delta, if any, handed over now. */
  take(now: number): UIMessageChunk[] {
    const held = this.#held;
    if (held === undefined) return [];
    this.#held = undefined;
    this.#lastShown = now;
    return [held];
  }

  /** Forgets the held delta (the reader went away). */
  drop(): void {
    this.#held = undefined;
  }
}
