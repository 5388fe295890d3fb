import type { UIMessageChunk } from 'ai';

/**
 * What a turn emitted, as one 64-bit fingerprint per position instead of the chunks
 * themselves: after `upgrade-required` the swapped-in run re-streams the turn from its
 * start, and only "is this chunk the one already shown at this position" is asked. Two
 * 32-bit lanes in a growable typed array keep the live path free of per-chunk objects.
 */
export class EmittedLog {
  private lanes = new Int32Array(2048);
  private size = 0;

  get length(): number {
    return this.size;
  }

  record(chunk: UIMessageChunk): void {
    fingerprint(chunk);
    const at = this.size * 2;
    if (at + 2 > this.lanes.length) {
      const grown = new Int32Array(this.lanes.length * 2);
      grown.set(this.lanes);
      this.lanes = grown;
    }
    this.lanes[at] = laneA;
    this.lanes[at + 1] = laneB;
    this.size++;
  }

  /**
   * True when `chunk` equals (as JSON) the chunk emitted at `index`; a `start` matches any
   * `start`, and a text or reasoning delta is compared on what the AI SDK reads from it.
   */
  matches(index: number, chunk: UIMessageChunk): boolean {
    if (index >= this.size) return false;
    fingerprint(chunk);
    return this.lanes[index * 2] === laneA && this.lanes[index * 2 + 1] === laneB;
  }
}

// The hash's result, returned through module state so hashing allocates nothing.
let laneA = 0;
let laneB = 0;

const SEED_A = 0x811c9dc5 | 0;
const SEED_B = 0x2545f491 | 0;
const START = 0x5354;
const TEXT_DELTA = 0x5444;
const REASONING_DELTA = 0x5244;

/**
 * A `start` keeps the message id it was first shown with, so only its type counts. Deltas,
 * nearly every chunk of a turn, are hashed by the fields the AI SDK reads from them (`id`,
 * `delta`, `providerMetadata`), without walking their keys: this runs once per chunk shown.
 */
function fingerprint(chunk: UIMessageChunk): void {
  laneA = SEED_A;
  laneB = SEED_B;
  switch (chunk.type) {
    case 'start':
      mix(START);
      return;
    case 'text-delta':
    case 'reasoning-delta': {
      const { id, delta, providerMetadata } = chunk;
      if (typeof id !== 'string' || typeof delta !== 'string') break;
      mix(chunk.type === 'text-delta' ? TEXT_DELTA : REASONING_DELTA);
      hashString(id);
      hashString(delta);
      if (providerMetadata !== undefined) hashValue(providerMetadata);
      return;
    }
  }
  hashValue(chunk);
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
