import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BenchChild, runWorkerJob, startFixtureChild } from '../../bench/child-process.js';
import { expectedReply, type TurnSpec } from '../../bench/fixture-turn.js';
import type { LongTurnJob, LongTurnResult } from '../../bench/jobs/long-turn-job.js';
import type { ScaleJob, ScaleResult } from '../../bench/jobs/scale-job.js';
import type { ThroughputJob, ThroughputResult } from '../../bench/jobs/throughput-job.js';
import { expectedTextHash } from '../../bench/verify-turn.js';

// The bench's real path: the fixture server and the client each in their own process.
const turn: TurnSpec = { name: 'worker', deltas: 500, batchSize: 10 };
/** A second turn for jobs whose warm-up must be another chat than the measured turn. */
const warm: TurnSpec = { name: 'worker-warm', deltas: 100, batchSize: 10 };
/** A paced turn for the scale job (one record per batch, as in the bench). */
const paced = { name: 'worker-paced', deltas: 20, batchSize: 1, intervalMs: 5 };
let server: { url: string; child: BenchChild };

beforeAll(async () => {
  server = await startFixtureChild([turn, warm, paced]);
}, 30_000);
afterAll(async () => {
  await server.child.stop();
});

describe('bench worker processes', () => {
  it('measure a checked turn in a fresh process', async () => {
    const job: ThroughputJob = {
      kind: 'throughput',
      variant: 'floor',
      consume: 'reducer',
      baseUrl: server.url,
      warmup: turn,
      turn,
    };
    const result = await runWorkerJob<ThroughputResult>(job);
    expect(result.chunks).toBe(turn.deltas + 6);
    expect(result.cpuUs).toBeGreaterThan(0);
    expect(result.wallMs).toBeGreaterThan(0);
    expect(result.peakRssBytes).toBeGreaterThanOrEqual(result.baselineRssBytes);
  }, 30_000);

  it('fail the job loudly when the client delivers anything but the expected text', async () => {
    // The worker expects another seed's text than the server streams: a wrong answer.
    const job: ThroughputJob = {
      kind: 'throughput',
      variant: 'floor',
      consume: 'chunks',
      baseUrl: server.url,
      warmup: turn,
      turn: { ...turn, seed: 7 },
    };
    await expect(runWorkerJob(job)).rejects.toThrow(/fixture check failed/);
  }, 30_000);

  it('check a long turn by hash and length without keeping its chunks', async () => {
    const hashed = (spec: TurnSpec, seed?: number) => {
      const { chunkCount, deltas, text } = expectedReply({ ...spec, seed });
      return { ...spec, expected: { chunkCount, deltas, ...expectedTextHash(text) } };
    };
    for (const variant of ['floor', 'durable-chat'] as const) {
      const job: LongTurnJob = {
        kind: 'long-turn',
        variant,
        baseUrl: server.url,
        warmup: hashed(warm),
        turn: hashed(turn),
      };
      const result = await runWorkerJob<LongTurnResult>(job);
      expect(result.chunks).toBe(turn.deltas + 6);
      expect(result.delivered).toBeLessThanOrEqual(result.chunks);
      expect(result.turnPeakRssBytes).toBeGreaterThanOrEqual(result.baselineRssBytes);
      expect(Number.isFinite(result.retainedBytes)).toBe(true);
    }
    // Another seed's text than the server streams: the hash differs and the job fails.
    const failing: LongTurnJob = {
      kind: 'long-turn',
      variant: 'floor',
      baseUrl: server.url,
      warmup: hashed(warm),
      turn: hashed(turn, 7),
    };
    await expect(runWorkerJob(failing)).rejects.toThrow(/fixture check failed/);
  }, 60_000);

  it('run concurrent chats through every scale variant, each reply checked exactly', async () => {
    // floor-overlap opens its read while the append is in flight; the job checks every reply.
    for (const variant of ['floor', 'floor-stream', 'floor-overlap', 'durable-chat'] as const) {
      const job: ScaleJob = { kind: 'scale', variant, baseUrl: server.url, sessions: 5, turn: paced };
      const result = await runWorkerJob<ScaleResult>(job);
      expect(result.sessions, variant).toBe(5);
      expect(result.chunks, variant).toBeGreaterThan(0);
    }
  }, 60_000);

  it('write an allocation profile of the sends that counts collected objects', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'alloc-'));
    try {
      const path = join(directory, 'scale.heapprofile');
      const job: ScaleJob = {
        kind: 'scale',
        variant: 'floor-overlap',
        baseUrl: server.url,
        sessions: 3,
        turn: paced,
        allocationProfile: { path, intervalBytes: 1024 },
      };
      await runWorkerJob<ScaleResult>(job);
      expect(existsSync(path)).toBe(true);
      const profile = JSON.parse(readFileSync(path, 'utf8')) as {
        head: { children: unknown[] };
        samples: unknown[];
      };
      expect(profile.head.children.length).toBeGreaterThan(0);
      expect(profile.samples.length).toBeGreaterThan(0);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  }, 30_000);
});
