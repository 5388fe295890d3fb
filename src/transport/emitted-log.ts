import type { UIMessageChunk } from 'ai';

/** How a re-streamed chunk compares with what was shown at its position. */
export type ReplayVerdict =
  /** Its position is in a block still being compared: it waits in the log (`takeDecided`). */
  | 'held'
  /** The decided chunks repeat what was shown: drop them. */
  | 'repeat'
  /** The new run answers differently from the first decided chunk on: show them, in order. */
  | 'diverged'
  /** The re-stream has repeated everything shown: this chunk is new (show it). */
  | 'past';

/**
 * What a turn emitted, for the re-stream after `upgrade-required`: the swapped-in run answers
 * the turn again from its start, and only "is this chunk the one already shown at this
 * position" is asked, in order from position 0.
 *
 * Memory is bounded, not per chunk: the first {@link EXACT_POSITIONS} positions keep one
 * 64-bit fingerprint each (at most 128 KiB, allocated as the turn grows), so a divergence
 * there is found at its exact chunk. Past them, one 64-bit hash per block of
 * {@link BLOCK_POSITIONS} positions (8 bytes per 256 chunks: a million-chunk turn keeps
 * 31 KiB). A re-stream there holds the new run's chunks of the block until the block is
 * complete: a block that hashes the same is dropped as a repeat; one that does not is shown
 * from its first chunk (at most 255 repeated chunks before the difference). Exact and bounded
 * cannot both hold: knowing where two sequences first differ takes something per position.
 */
export class EmittedLog {
  #lanes: Int32Array = EMPTY;
  #size = 0;
  /** One hash per complete block past the exact positions: lanes A and B. */
  #blocks: Int32Array = EMPTY;
  #blockCount = 0;
  /** The hash of the block being filled (past the exact positions). */
  #openA = SEED_A;
  #openB = SEED_B;
  // A re-stream in progress: its position, and the held chunks of the block being compared.
  #replayAt = -1;
  #held: UIMessageChunk[] = [];
  #heldA = SEED_A;
  #heldB = SEED_B;

  get length(): number {
    return this.#size;
  }

  /** Bytes the log holds, whatever the turn's length (for the memory tests). */
  get retainedBytes(): number {
    return this.#lanes.byteLength + this.#blocks.byteLength;
  }

  record(chunk: UIMessageChunk): void {
    fingerprint(chunk);
    const position = this.#size++;
    if (position < EXACT_POSITIONS) {
      const at = position * 2;
      if (at + 2 > this.#lanes.length) this.#lanes = grow(this.#lanes, INITIAL_LANES, EXACT_POSITIONS * 2);
      this.#lanes[at] = laneA;
      this.#lanes[at + 1] = laneB;
      return;
    }
    this.#openA = chain(this.#openA, laneA, 0x01000193);
    this.#openB = chain(this.#openB, laneB, 0x5bd1e995);
    if ((position - EXACT_POSITIONS + 1) % BLOCK_POSITIONS !== 0) return;
    const at = this.#blockCount * 2;
    if (at + 2 > this.#blocks.length)
      this.#blocks = grow(this.#blocks, INITIAL_LANES, Number.POSITIVE_INFINITY);
    this.#blocks[at] = this.#openA;
    this.#blocks[at + 1] = this.#openB;
    this.#blockCount++;
    this.#openA = SEED_A;
    this.#openB = SEED_B;
  }

  /** A re-stream starts at position 0 (a second upgrade starts over; what was held is dropped). */
  restart(): void {
    this.#replayAt = 0;
    this.#dropHeld();
  }

  get replaying(): boolean {
    return this.#replayAt >= 0;
  }

  /**
   * Compares the re-stream's next chunk with what was shown at its position; a `start`
   * matches any `start` (the message keeps the id it was shown with). Every verdict but
   * `held` decides the chunks `takeDecided()` returns (this one and those held before it);
   * `diverged` and `past` end the re-stream.
   */
  replay(chunk: UIMessageChunk): ReplayVerdict {
    const position = this.#replayAt;
    this.#held.push(chunk);
    if (position >= this.#size) {
      this.#replayAt = -1;
      return 'past';
    }
    fingerprint(chunk);
    if (position < EXACT_POSITIONS) {
      if (this.#lanes[position * 2] !== laneA || this.#lanes[position * 2 + 1] !== laneB) {
        this.#replayAt = -1;
        return 'diverged';
      }
      this.#replayAt++;
      return 'repeat';
    }
    this.#heldA = chain(this.#heldA, laneA, 0x01000193);
    this.#heldB = chain(this.#heldB, laneB, 0x5bd1e995);
    this.#replayAt++;
    const block = Math.floor((position - EXACT_POSITIONS) / BLOCK_POSITIONS);
    const blockEnd = EXACT_POSITIONS + (block + 1) * BLOCK_POSITIONS;
    // The last block may be partial: it is compared once the re-stream reaches what was shown.
    if (position + 1 < Math.min(blockEnd, this.#size)) return 'held';
    const complete = block < this.#blockCount;
    const expectedA = complete ? this.#blocks[block * 2] : this.#openA;
    const expectedB = complete ? this.#blocks[block * 2 + 1] : this.#openB;
    const same = this.#heldA === expectedA && this.#heldB === expectedB;
    this.#heldA = SEED_A;
    this.#heldB = SEED_B;
    if (same) return 'repeat';
    this.#replayAt = -1;
    return 'diverged';
  }

  /** The chunks the last verdict (any but `held`) decided, in order. */
  takeDecided(): UIMessageChunk[] {
    const decided = this.#held;
    this.#dropHeld();
    return decided;
  }

  /**
   * The re-stream ends before its block could be compared (its turn-complete came): the
   * held chunks count as different (the new run stopped where the old one had gone on).
   */
  abandon(): UIMessageChunk[] {
    this.#replayAt = -1;
    return this.takeDecided();
  }

  #dropHeld(): void {
    if (this.#held.length > 0) this.#held = [];
    this.#heldA = SEED_A;
    this.#heldB = SEED_B;
  }
}

/** Positions compared one by one: 128 KiB of fingerprints at most. */
export const EXACT_POSITIONS = 16_384;
/** Positions per block hash past the exact ones. */
export const BLOCK_POSITIONS = 256;

const EMPTY = new Int32Array(0);
/** 32 positions (256 bytes) to start: most turns are short, and a chat holds one log per turn. */
const INITIAL_LANES = 64;

function grow(lanes: Int32Array, initial: number, limit: number): Int32Array {
  const grown = new Int32Array(Math.min(limit, Math.max(initial, lanes.length * 2)));
  grown.set(lanes);
  return grown;
}

function chain(state: number, value: number, prime: number): number {
  return Math.imul(state ^ value, prime) ^ (state >>> 13);
}

// The hash's result, returned through module state so hashing allocates nothing.
let laneA = 0;
let laneB = 0;

const SEED_A = 0x811c9dc5 | 0;
const SEED_B = 0x2545f491 | 0;
const START = 0x5354;
const TEXT_DELTA = 0x5444;
const REASONING_DELTA = 0x5244;

/** The last delta's part id and its hash: a part's deltas all carry the same id. */
let lastId: string | undefined;
let lastIdA = 0;
let lastIdB = 0;

/**
 * A `start` keeps the message id it was first shown with, so only its type counts. Deltas,
 * nearly every chunk of a turn, are hashed by the fields the AI SDK reads from them (`id`,
 * `delta`, `providerMetadata`), without walking their keys: this runs once per chunk shown,
 * so the delta is hashed in locals (module state is read and written once, not per step) and
 * the part id's hash is reused while it repeats.
 */
function fingerprint(chunk: UIMessageChunk): void {
  switch (chunk.type) {
    case 'start':
      laneA = SEED_A;
      laneB = SEED_B;
      mix(START);
      return;
    case 'text-delta':
    case 'reasoning-delta': {
      const { id, delta, providerMetadata } = chunk;
      if (typeof id !== 'string' || typeof delta !== 'string') break;
      if (id !== lastId) hashId(id);
      const code = chunk.type === 'text-delta' ? TEXT_DELTA : REASONING_DELTA;
      let a = Math.imul(SEED_A ^ code, 0x01000193);
      let b = Math.imul(SEED_B ^ code, 0x5bd1e995) ^ (SEED_B >>> 15);
      a = Math.imul(a ^ lastIdA, 0x01000193);
      b = Math.imul(b ^ lastIdB, 0x5bd1e995) ^ (b >>> 15);
      // The delta's length first, then two UTF-16 code units per step: one encoding per text.
      const length = delta.length;
      a = Math.imul(a ^ length, 0x01000193);
      b = Math.imul(b ^ length, 0x5bd1e995) ^ (b >>> 15);
      let index = 0;
      for (; index + 1 < length; index += 2) {
        const pair = delta.charCodeAt(index) | (delta.charCodeAt(index + 1) << 16);
        a = Math.imul(a ^ pair, 0x01000193);
        b = Math.imul(b ^ pair, 0x5bd1e995) ^ (b >>> 15);
      }
      if (index < length) {
        const unit = delta.charCodeAt(index);
        a = Math.imul(a ^ unit, 0x01000193);
        b = Math.imul(b ^ unit, 0x5bd1e995) ^ (b >>> 15);
      }
      laneA = a;
      laneB = b;
      if (providerMetadata !== undefined) hashValue(providerMetadata);
      return;
    }
  }
  laneA = SEED_A;
  laneB = SEED_B;
  hashValue(chunk);
}

/** Hashes a part id on its own (its two lanes are mixed into each of its deltas' hash). */
function hashId(id: string): void {
  laneA = SEED_A;
  laneB = SEED_B;
  hashString(id);
  lastId = id;
  lastIdA = laneA;
  lastIdB = laneB;
}

function mix(code: number): void {
  laneA = Math.imul(laneA ^ code, 0x01000193);
  laneB = Math.imul(laneB ^ code, 0x5bd1e995) ^ (laneB >>> 15);
}

/** Two UTF-16 code units per step: half the multiplies of one per unit, same information. */
function hashString(text: string): void {
  mix(0x22);
  const length = text.length;
  let index = 0;
  for (; index + 1 < length; index += 2) mix(text.charCodeAt(index) | (text.charCodeAt(index + 1) << 16));
  if (index < length) mix(text.charCodeAt(index));
  mix(length);
}

/**
 * The keys every delta chunk has stand for a code each (property names from `JSON.parse`
 * are interned, so the comparisons are cheap); any other key is hashed by its text.
 */
function hashKey(key: string): void {
  switch (key) {
    case 'type':
      mix(0x101);
      return;
    case 'id':
      mix(0x102);
      return;
    case 'delta':
      mix(0x103);
      return;
    default:
      hashString(key);
  }
}

/** Hashes what `JSON.stringify` would write: same keys in the same order, `undefined` skipped. */
function hashValue(value: unknown): void {
  switch (typeof value) {
    case 'string':
      hashString(value);
      return;
    case 'number':
      mix(0x23);
      if (Number.isInteger(value) && Math.abs(value) < 0x7fffffff) mix(value);
      else hashString(JSON.stringify(value));
      return;
    case 'boolean':
      mix(value ? 0x74 : 0x66);
      return;
    case 'object':
      break;
    default:
      // undefined, functions, symbols: JSON writes them as null inside arrays.
      mix(0x6e);
      return;
  }
  if (value === null) {
    mix(0x6e);
    return;
  }
  if (Array.isArray(value)) {
    mix(0x5b);
    for (const item of value) hashValue(item);
    mix(0x5d);
    return;
  }
  mix(0x7b);
  const record = value as Record<string, unknown>;
  for (const key in record) {
    const item = record[key];
    // Most values of a chunk are strings: they skip the own-property and type checks below.
    if (typeof item === 'string') {
      hashKey(key);
      hashString(item);
      continue;
    }
    if (!Object.hasOwn(record, key)) continue;
    if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
    hashKey(key);
    hashValue(item);
  }
  mix(0x7d);
}
