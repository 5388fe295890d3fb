import type { UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { appendToQueuedDelta, joinDeltas } from '../../src/transport/delta-merge.js';

const text = (delta: string, id = 't'): UIMessageChunk => ({ type: 'text-delta', id, delta });

describe('appendToQueuedDelta (coalesceDeltas)', () => {
  it('appends a delta of the same part in place', () => {
    const queued = text('ab');
    expect(appendToQueuedDelta(queued, text('cd'))).toBe(true);
    expect(queued).toEqual(text('abcd'));
  });

  it('keeps apart other parts, other kinds, non-deltas and deltas with providerMetadata', () => {
    const queued = text('ab');
    expect(appendToQueuedDelta(queued, text('x', 'u'))).toBe(false);
    expect(appendToQueuedDelta(queued, { type: 'reasoning-delta', id: 't', delta: 'x' })).toBe(false);
    expect(appendToQueuedDelta(queued, { type: 'text-end', id: 't' })).toBe(false);
    expect(appendToQueuedDelta({ type: 'text-start', id: 't' }, text('x'))).toBe(false);
    expect(
      appendToQueuedDelta(queued, { type: 'text-delta', id: 't', delta: 'x', providerMetadata: { p: {} } }),
    ).toBe(false);
    expect(queued).toEqual(text('ab'));
  });

  it('stops growing a merged delta at 16,384 characters (backpressure still applies)', () => {
    const queued = text('x'.repeat(16_384));
    expect(appendToQueuedDelta(queued, text('y'))).toBe(false);
  });
});

describe('joinDeltas (render pacing)', () => {
  it('keeps the newest providerMetadata that is set, as the reducer does', () => {
    const first = { type: 'text-delta', id: 't', delta: 'a', providerMetadata: { p: { n: 1 } } } as const;
    expect(joinDeltas(first, { type: 'text-delta', id: 't', delta: 'b' })).toEqual({ ...first, delta: 'ab' });
    expect(
      joinDeltas(first, { type: 'text-delta', id: 't', delta: 'b', providerMetadata: { p: { n: 2 } } }),
    ).toEqual({ type: 'text-delta', id: 't', delta: 'ab', providerMetadata: { p: { n: 2 } } });
  });
});
