import { describe, expect, it } from 'vitest';
import { SIZE_GUARD_BYTES } from '../../bench/bundle-size.js';
import type { VariantName } from '../../bench/clients/client-variant.js';
import { cpuGuardViolations, sizeGuardViolations } from '../../bench/guard.js';
import type { ThroughputCell } from '../../bench/scenarios/throughput.js';
import { verifyChunks } from '../../bench/verify-turn.js';

function cell(shape: string, variant: VariantName, cpuUsPerChunk: number, error?: string): ThroughputCell {
  return {
    shape,
    batchSize: 100,
    consume: 'chunks',
    variant,
    runs: 3,
    wallMs: 1,
    chunksPerSecond: 1,
    cpuUsPerChunk,
    peakRssBytes: 1,
    turnRssBytes: 1,
    deliveredChunks: 1,
    samples: [],
    ...(error === undefined ? {} : { error }),
  };
}

describe('the quick run CPU guard', () => {
  it('flags a shape where durable-chat passes 1.5x the floor in the same run, ratios only', () => {
    const cells = [
      cell('100', 'durable-chat', 1.49, undefined),
      cell('100', 'floor', 1),
      cell('live', 'durable-chat', 14),
      cell('live', 'floor', 10),
      cell('backlog', 'durable-chat', 3.1),
      cell('backlog', 'floor', 2),
    ];
    expect(cpuGuardViolations(cells)).toEqual([{ shape: 'backlog', variant: 'durable-chat', ratio: 1.55 }]);
  });

  it('checks the unmerged path (coalesceDeltas: false) against the same floor', () => {
    const cells = [
      cell('100', 'durable-chat', 1.2),
      cell('100', 'durable-chat-unmerged', 1.8),
      cell('100', 'floor', 1),
      cell('live', 'durable-chat', 1.2),
      cell('live', 'durable-chat-unmerged', 1.7),
      cell('live', 'floor', 1),
    ];
    expect(cpuGuardViolations(cells)).toEqual([
      { shape: '100', variant: 'durable-chat-unmerged', ratio: 1.8 },
    ]);
  });

  it('ignores a shape with a failed cell (the fixture check reports that) and the reducer rows', () => {
    const cells = [
      cell('100', 'durable-chat', 9),
      cell('100', 'floor', 1, 'fixture check failed'),
      { ...cell('live', 'durable-chat', 9), consume: 'reducer' as const },
      { ...cell('live', 'floor', 1), consume: 'reducer' as const },
    ];
    expect(cpuGuardViolations(cells)).toEqual([]);
  });
});

describe('the quick run size guard', () => {
  const bundle = (gzipBytes: number, error?: string) => ({
    name: 'durable-chat: transport + useChatSession + route client',
    imports: '',
    minifiedBytes: gzipBytes * 3,
    gzipBytes,
    ...(error === undefined ? {} : { error }),
  });

  it('passes at the guard, fails a byte over it, and fails when nothing was measured', () => {
    expect(sizeGuardViolations([bundle(SIZE_GUARD_BYTES)])).toEqual([]);
    expect(sizeGuardViolations([bundle(SIZE_GUARD_BYTES + 1)])).toHaveLength(1);
    expect(sizeGuardViolations([bundle(Number.NaN, 'esbuild failed')])).toHaveLength(1);
    expect(sizeGuardViolations([])).toHaveLength(1);
    // The devtools panel is outside the budget: its size never decides the guard.
    const panel = { ...bundle(SIZE_GUARD_BYTES * 2), name: 'durable-chat/devtools: the panel' };
    expect(sizeGuardViolations([bundle(SIZE_GUARD_BYTES), panel])).toEqual([]);
    expect(sizeGuardViolations([panel, bundle(SIZE_GUARD_BYTES)])).toEqual([]);
  });
});

describe('the bench fixture check', () => {
  const turn = { text: 'abcdef', chunkCount: 9, deltas: 3 };
  const collect = (types: string[], deltas: string[]) => ({
    count: types.length,
    frames: types.filter((type) => type !== 'text-delta').length,
    deltas,
    firstType: types[0],
    lastType: types[types.length - 1],
    add() {},
  });
  const frame = ['start', 'start-step', 'text-start', 'text-end', 'finish-step', 'finish'];

  it('accepts merged deltas with the exact text', () => {
    const types = [...frame.slice(0, 3), 'text-delta', 'text-delta', ...frame.slice(3)];
    expect(() => verifyChunks('t', turn, collect(types, ['abc', 'def']))).not.toThrow();
  });

  it('rejects a lost or repeated delta, and a missing or extra frame chunk', () => {
    const types = [...frame.slice(0, 3), 'text-delta', ...frame.slice(3)];
    expect(() => verifyChunks('t', turn, collect(types, ['abcde']))).toThrow(/first difference at 5/);
    expect(() => verifyChunks('t', turn, collect(types, ['abcdefdef']))).toThrow(/text of 9 chars/);
    const missing = [...frame.slice(0, 3), 'text-delta', ...frame.slice(4)];
    expect(() => verifyChunks('t', turn, collect(missing, ['abcdef']))).toThrow(/not text deltas/);
  });
});
