import type { UIMessageChunk } from 'ai';

/** A text or reasoning delta: the chunks the AI SDK's reducer appends to a part. */
export type DeltaChunk = Extract<UIMessageChunk, { type: 'text-delta' | 'reasoning-delta' }>;

/** `next` continues `held`: a delta of the same kind and part. */
export function continuesDelta(held: DeltaChunk, next: UIMessageChunk): next is DeltaChunk {
  return next.type === held.type && (next as DeltaChunk).id === held.id;
}

/**
 * Two deltas of one part as one. The reducer appends each delta and keeps the newest
 * `providerMetadata` that is set (`chunk.providerMetadata ?? part.providerMetadata`, in
 * ai 6 and 7), so one merged delta leaves the part exactly as the two did.
 */
export function joinDeltas(held: DeltaChunk, next: DeltaChunk): DeltaChunk {
  const providerMetadata = next.providerMetadata ?? held.providerMetadata;
  return {
    type: held.type,
    id: held.id,
    delta: held.delta + next.delta,
    ...(providerMetadata == null ? {} : { providerMetadata }),
  } as DeltaChunk;
}

/** A delta merged in place stops growing here, so a stalled reader still meets backpressure. */
const MAX_MERGED_DELTA_LENGTH = 16_384;

/**
 * The transport's `coalesceDeltas` rule: folds `next` into `into` in place (`into` is a chunk
 * still unread in the stream's queue) when it continues it. Deltas carrying
 * `providerMetadata` are kept apart: merging in place must not give the queued chunk
 * metadata it did not have, and they are rare.
 */
export function appendToQueuedDelta(into: UIMessageChunk, next: UIMessageChunk): boolean {
  if (
    (into.type !== 'text-delta' && into.type !== 'reasoning-delta') ||
    !continuesDelta(into, next) ||
    into.providerMetadata !== undefined ||
    next.providerMetadata !== undefined ||
    into.delta.length >= MAX_MERGED_DELTA_LENGTH
  )
    return false;
  into.delta += next.delta;
  return true;
}
