import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BenchChild, runWorkerJob, startFixtureChild } from '../../bench/child-process.js';
import type { TurnSpec } from '../../bench/fixture-turn.js';
import type { ThroughputJob, ThroughputResult } from '../../bench/jobs/throughput-job.js';

// The bench's real path: the fixture server and the client each in their own process.
const turn: TurnSpec = { name: 'worker', deltas: 500, batchSize: 10 };
let server: { url: string; child: BenchChild };

beforeAll(async () => {
  server = await startFixtureChild([turn]);
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
});
