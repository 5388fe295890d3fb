import type { UIMessageChunk } from 'ai';

/**
 * What a turn emitted, as one 64-bit fingerprint per position instead of the chunks
 * themselves: after `upgrade-required` the swapped-in run re-streams the turn from its
 * start, and only "is this chunk the one already shown at this position" is asked. Two
 * 32-bit lanes in a growable typed array keep the live path free of per-chunk objects.
 */
export class EmittedLog {
  /**
   * Allocated on the first chunk and grown by doubling from a small start: a chat holds one
   * log per turn stream, and most turns are short (a thousand chats mid-turn each paid 8 KiB
   * for a 2,048-lane array up front).
   */
  private lanes: Int32Array = EMPTY;
  private size = 0;

  get length(): number {
    return this.size;
  }

  record(chunk: UIMessageChunk): void {
    fingerprint(chunk);
    const at = this.size * 2;
    if (at + 2 > this.lanes.length) {
      const grown = new Int32Array(Math.max(INITIAL_LANES, this.lanes.length * 2));
      grown.set(this.lanes);
      this.lanes = grown;
    }
    this.lanes[at] = laneA;
    this.lanes[at + 1] = laneB;
    this.size++;
  }

  /** True when `chunk` equals (as JSON) the chunk emitted at `index`; a `start` matches any `start`. */
  matches(index: number, chunk: UIMessageChunk): boolean {
    if (index >= this.size) return false;
    fingerprint(chunk);
    return this.lanes[index * 2] === laneA && this.lanes[index * 2 + 1] === laneB;
  }
}

const EMPTY = new Int32Array(0);
/** 32 positions (256 bytes): a short turn's log stays small. */
const INITIAL_LANES = 64;

// The hash's result, returned through module state so hashing allocates nothing.
let laneA = 0;
let laneB = 0;

const SEED_A = 0x811c9dc5 | 0;
const SEED_B = 0x2545f491 | 0;
const START = 0x5354;

/** A `start` keeps the message id it was first shown with, so only its type counts. */
function fingerprint(chunk: UIMessageChunk): void {
  laneA = SEED_A;
  laneB = SEED_B;
  if (chunk.type === 'start') mix(START);
  else hashValue(chunk);
}

function mix(code: number): void {
  laneA = Math.imul(laneA ^ code, 0x01000193);
  laneB = Math.imul(laneB ^ code, 0x5bd1e995) ^ (laneB >>> 15);
}

function hashString(text: string): void {
  mix(0x22);
  for (let index = 0; index < text.length; index++) mix(text.charCodeAt(index));
  mix(text.length);
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
    if (!Object.hasOwn(record, key)) continue;
    const item = record[key];
    if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
    hashString(key);
    hashValue(item);
  }
  mix(0x7d);
}
