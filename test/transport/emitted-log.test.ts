import type { UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { BLOCK_POSITIONS, EmittedLog, EXACT_POSITIONS } from '../../src/transport/emitted-log.js';

const delta = (text: string): UIMessageChunk => ({ type: 'text-delta', id: 't', delta: text });

function turn(deltas: number): UIMessageChunk[] {
  return [
    { type: 'start', messageId: 'm1' },
    { type: 'text-start', id: 't' },
    ...Array.from({ length: deltas }, (_, index) => delta(`w${index}`)),
  ];
}

function logOf(chunks: UIMessageChunk[]): EmittedLog {
  const log = new EmittedLog();
  for (const chunk of chunks) log.record(chunk);
  return log;
}

/** Replays `chunks` and returns what a turn stream would show, and how the re-stream ended. */
function replayAll(log: EmittedLog, chunks: UIMessageChunk[]) {
  const shown: UIMessageChunk[] = [];
  let dropped = 0;
  let ended: 'diverged' | 'past' | undefined;
  log.restart();
  for (const chunk of chunks) {
    if (ended !== undefined) {
      shown.push(chunk);
      continue;
    }
    const verdict = log.replay(chunk);
    if (verdict === 'held') continue;
    const decided = log.takeDecided();
    if (verdict === 'repeat') dropped += decided.length;
    else {
      ended = verdict;
      shown.push(...decided);
    }
  }
  return { shown, dropped, ended };
}

describe('EmittedLog', () => {
  it('matches a chunk equal as JSON at the same position, and nothing else', () => {
    const chunks = turn(5000);
    const log = logOf(chunks);
    expect(log.length).toBe(chunks.length);
    // A start matches whatever its message id (the message keeps the id it was shown with).
    const same = replayAll(log, [{ type: 'start', messageId: 'other' }, ...chunks.slice(1)]);
    expect(same).toEqual({ shown: [], dropped: chunks.length, ended: undefined });
    const other = [...chunks.slice(0, 4001), delta('w3998'), ...chunks.slice(4002)];
    expect(replayAll(log, other)).toEqual({
      shown: other.slice(4001),
      dropped: 4001,
      ended: 'diverged',
    });
    expect(replayAll(log, [chunks[0] as UIMessageChunk, { type: 'text-start', id: 'u' }]).ended).toBe(
      'diverged',
    );
    const longer = [...chunks, delta('more')];
    expect(replayAll(log, longer)).toEqual({ shown: [delta('more')], dropped: chunks.length, ended: 'past' });
  });

  it('compares deltas on what the AI SDK reads: id, delta and providerMetadata', () => {
    const recorded: UIMessageChunk[] = [
      { type: 'text-delta', id: 't', delta: 'ab' },
      { type: 'reasoning-delta', id: 'r', delta: 'x', providerMetadata: { p: { n: 1 } } },
      { type: 'text-delta', id: 7, delta: 'ab' } as unknown as UIMessageChunk,
    ];
    const log = logOf(recorded);
    // True when `chunk`, re-streamed at `index` after the positions before it repeated, is a repeat.
    const matches = (index: number, chunk: UIMessageChunk) => {
      log.restart();
      for (const earlier of recorded.slice(0, index)) {
        log.replay(earlier);
        log.takeDecided();
      }
      const verdict = log.replay(chunk);
      log.takeDecided();
      return verdict === 'repeat';
    };
    expect(matches(0, { type: 'text-delta', id: 't', delta: 'ab' })).toBe(true);
    expect(matches(0, { type: 'reasoning-delta', id: 't', delta: 'ab' })).toBe(false);
    expect(matches(0, { type: 'text-delta', id: 't', delta: 'a' })).toBe(false);
    expect(matches(0, { type: 'text-delta', id: 'ta', delta: 'b' })).toBe(false);
    expect(matches(0, { type: 'text-delta', id: 't', delta: 'ab', providerMetadata: {} })).toBe(false);
    expect(
      matches(1, { type: 'reasoning-delta', id: 'r', delta: 'x', providerMetadata: { p: { n: 1 } } }),
    ).toBe(true);
    expect(
      matches(1, { type: 'reasoning-delta', id: 'r', delta: 'x', providerMetadata: { p: { n: 2 } } }),
    ).toBe(false);
    // A malformed delta (non-string id) is hashed whole, so ids of other types still differ.
    expect(matches(2, { type: 'text-delta', id: 7, delta: 'ab' } as unknown as UIMessageChunk)).toBe(true);
    expect(matches(2, { type: 'text-delta', id: 8, delta: 'ab' } as unknown as UIMessageChunk)).toBe(false);
  });

  it('compares as JSON.stringify would: key order counts, undefined members do not', () => {
    const log = logOf([
      { type: 'data-x', data: { a: 1, b: [true, null, 'x'], c: 1.5 } } as UIMessageChunk,
      { type: 'data-y', data: { a: 1, b: 2 } } as UIMessageChunk,
    ]);
    const verdict = (index: number, chunk: unknown) => {
      log.restart();
      for (let at = 0; at < index; at++) log.replay({ type: 'start' });
      return log.replay(chunk as UIMessageChunk);
    };
    const first = (chunk: unknown) => {
      log.restart();
      const result = log.replay(chunk as UIMessageChunk);
      log.takeDecided();
      return result;
    };
    expect(first({ type: 'data-x', data: { a: 1, b: [true, null, 'x'], c: 1.5, d: undefined } })).toBe(
      'repeat',
    );
    expect(first({ type: 'data-x', data: { a: 1, b: [true, null, 'x'], c: 1.25 } })).toBe('diverged');
    expect(first({ type: 'data-x', data: { a: 1, b: [true, 'x', null], c: 1.5 } })).toBe('diverged');
    // Position 1, after a repeated position 0.
    const second = (chunk: unknown) => {
      log.restart();
      log.replay({ type: 'data-x', data: { a: 1, b: [true, null, 'x'], c: 1.5 } } as UIMessageChunk);
      log.takeDecided();
      return log.replay(chunk as UIMessageChunk);
    };
    expect(second({ type: 'data-y', data: { a: 1, b: 2 } })).toBe('repeat');
    expect(second({ type: 'data-y', data: { b: 2, a: 1 } })).toBe('diverged');
    expect(second({ type: 'data-y', data: { a: '1', b: 2 } })).toBe('diverged');
    expect(verdict(0, { type: 'start' })).toBe('diverged');
  });

  it('keeps bounded memory: nothing before the first chunk, 1 KiB for a short turn, 160 KiB for a million chunks', () => {
    expect(new EmittedLog().retainedBytes).toBe(0);
    expect(logOf(turn(100)).retainedBytes).toBeLessThanOrEqual(1024);
    const log = new EmittedLog();
    const chunk = delta('same');
    for (let index = 0; index < 1_000_000; index++) log.record(chunk);
    expect(log.length).toBe(1_000_000);
    // 8 bytes per position would be 8,000,000.
    expect(log.retainedBytes).toBeLessThanOrEqual(160 * 1024);
  });

  it('past the exact positions, drops repeated blocks and shows a differing block from its first chunk', () => {
    const blocks = 3;
    const chunks = turn(EXACT_POSITIONS + blocks * BLOCK_POSITIONS + 10);
    const log = logOf(chunks);
    // The same answer again: every block, the partial last one included, is a repeat.
    expect(replayAll(log, chunks)).toEqual({ shown: [], dropped: chunks.length, ended: undefined });
    // One chunk differs inside the second block: that block is shown from its start.
    const blockStart = EXACT_POSITIONS + BLOCK_POSITIONS;
    const differing = [...chunks];
    differing[blockStart + 17] = delta('other');
    const result = replayAll(log, differing);
    expect(result.ended).toBe('diverged');
    expect(result.dropped).toBe(blockStart);
    expect(result.shown).toEqual(differing.slice(blockStart));
    // A difference in the partial last block is found once the re-stream reaches the shown end.
    const tail = [...chunks];
    tail[tail.length - 3] = delta('other');
    const last = replayAll(log, tail);
    expect(last.ended).toBe('diverged');
    expect(last.shown).toEqual(tail.slice(EXACT_POSITIONS + blocks * BLOCK_POSITIONS));
    // Longer than what was shown: the rest is new.
    expect(replayAll(log, [...chunks, delta('more')]).shown).toEqual([delta('more')]);
  });

  it('a re-stream that stops inside a block gives back what it held; a restart drops it', () => {
    const chunks = turn(EXACT_POSITIONS + 2 * BLOCK_POSITIONS);
    const log = logOf(chunks);
    log.restart();
    const stop = EXACT_POSITIONS + 5;
    for (let index = 0; index < stop; index++) {
      const verdict = log.replay(chunks[index] as UIMessageChunk);
      if (verdict !== 'held') log.takeDecided();
    }
    expect(log.replaying).toBe(true);
    expect(log.abandon()).toEqual(chunks.slice(EXACT_POSITIONS, stop));
    expect(log.replaying).toBe(false);
    // A second upgrade mid-block starts over from position 0 with nothing held.
    log.restart();
    for (let index = 0; index < stop; index++) {
      const verdict = log.replay(chunks[index] as UIMessageChunk);
      if (verdict !== 'held') log.takeDecided();
    }
    log.restart();
    expect(log.replay(chunks[0] as UIMessageChunk)).toBe('repeat');
    expect(log.takeDecided()).toEqual([chunks[0]]);
  });
});
