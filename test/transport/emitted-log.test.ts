import type { UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { EmittedLog } from '../../src/transport/emitted-log.js';

describe('EmittedLog', () => {
  it('matches a chunk equal as JSON at the same position, and nothing else', () => {
    const log = new EmittedLog();
    const chunks: UIMessageChunk[] = [
      { type: 'start', messageId: 'm1' },
      { type: 'text-start', id: 't' },
      ...Array.from(
        { length: 5000 },
        (_, index): UIMessageChunk => ({ type: 'text-delta', id: 't', delta: `w${index}` }),
      ),
    ];
    for (const chunk of chunks) log.record(chunk);
    expect(log.length).toBe(chunks.length);
    // A start matches whatever its message id (the message keeps the id it was shown with).
    expect(log.matches(0, { type: 'start', messageId: 'other' })).toBe(true);
    expect(log.matches(1, { type: 'text-start', id: 't' })).toBe(true);
    expect(log.matches(1, { type: 'text-start', id: 'u' })).toBe(false);
    expect(log.matches(4001, { type: 'text-delta', id: 't', delta: 'w3999' })).toBe(true);
    expect(log.matches(4001, { type: 'text-delta', id: 't', delta: 'w3998' })).toBe(false);
    expect(log.matches(4001, { type: 'text-delta', id: 't', delta: 'w39990' })).toBe(false);
    expect(log.matches(chunks.length, { type: 'text-start', id: 't' })).toBe(false);
  });

  it('compares deltas on what the AI SDK reads: id, delta and providerMetadata', () => {
    const log = new EmittedLog();
    log.record({ type: 'text-delta', id: 't', delta: 'ab' });
    log.record({ type: 'reasoning-delta', id: 'r', delta: 'x', providerMetadata: { p: { n: 1 } } });
    log.record({ type: 'text-delta', id: 7, delta: 'ab' } as unknown as UIMessageChunk);
    expect(log.matches(0, { type: 'text-delta', id: 't', delta: 'ab' })).toBe(true);
    expect(log.matches(0, { type: 'reasoning-delta', id: 't', delta: 'ab' })).toBe(false);
    expect(log.matches(0, { type: 'text-delta', id: 't', delta: 'a' })).toBe(false);
    expect(log.matches(0, { type: 'text-delta', id: 'ta', delta: 'b' })).toBe(false);
    expect(log.matches(0, { type: 'text-delta', id: 't', delta: 'ab', providerMetadata: {} })).toBe(false);
    expect(
      log.matches(1, { type: 'reasoning-delta', id: 'r', delta: 'x', providerMetadata: { p: { n: 1 } } }),
    ).toBe(true);
    expect(
      log.matches(1, { type: 'reasoning-delta', id: 'r', delta: 'x', providerMetadata: { p: { n: 2 } } }),
    ).toBe(false);
    // A malformed delta (non-string id) is hashed whole, so ids of other types still differ.
    expect(log.matches(2, { type: 'text-delta', id: 7, delta: 'ab' } as unknown as UIMessageChunk)).toBe(
      true,
    );
    expect(log.matches(2, { type: 'text-delta', id: 8, delta: 'ab' } as unknown as UIMessageChunk)).toBe(
      false,
    );
  });

  it('compares as JSON.stringify would: key order counts, undefined members do not', () => {
    const log = new EmittedLog();
    log.record({ type: 'data-x', data: { a: 1, b: [true, null, 'x'], c: 1.5 } } as UIMessageChunk);
    log.record({ type: 'data-y', data: { a: 1, b: 2 } } as UIMessageChunk);
    expect(
      log.matches(0, {
        type: 'data-x',
        data: { a: 1, b: [true, null, 'x'], c: 1.5, d: undefined },
      } as UIMessageChunk),
    ).toBe(true);
    expect(
      log.matches(0, { type: 'data-x', data: { a: 1, b: [true, null, 'x'], c: 1.25 } } as UIMessageChunk),
    ).toBe(false);
    expect(
      log.matches(0, { type: 'data-x', data: { a: 1, b: [true, 'x', null], c: 1.5 } } as UIMessageChunk),
    ).toBe(false);
    expect(log.matches(1, { type: 'data-y', data: { b: 2, a: 1 } } as UIMessageChunk)).toBe(false);
    expect(log.matches(1, { type: 'data-y', data: { a: '1', b: 2 } } as UIMessageChunk)).toBe(false);
  });
});
