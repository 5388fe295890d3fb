import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BenchChild, runWorkerJob, startFixtureChild } from '../../bench/child-process.js';
import type { ServedTurnSpec } from '../../bench/fixture-server.js';
import type { RendersJob, RendersResult } from '../../bench/jobs/renders-job.js';

// The renders scenario's real path: a paced fixture turn, a React root in a fresh process.
const turn: ServedTurnSpec = { name: 'renders-worker', deltas: 120, batchSize: 1, intervalMs: 4 };
let server: { url: string; child: BenchChild };

beforeAll(async () => {
  server = await startFixtureChild([turn]);
}, 30_000);
afterAll(async () => {
  await server.child.stop();
});

describe('bench renders job', () => {
  it.each(['useDurableChat', 'useChat'] as const)(
    '%s: checks the reply, counts renders and times every delta from arrival to commit',
    async (path) => {
      const run = (throttleMs: number | undefined) => {
        const job: RendersJob = { kind: 'renders', baseUrl: server.url, turn, path, throttleMs };
        return runWorkerJob<RendersResult>(job);
      };
      const paced = await run(undefined);
      const unpaced = await run(0);
      expect(paced.chunks).toBe(turn.deltas + 6);
      expect(unpaced.renders).toBeGreaterThan(turn.deltas);
      expect(paced.renders).toBeLessThan(unpaced.renders / 2);
      // Commits are counted apart from renders, and the span over which the reply's text grew
      // on screen (the budget counts it in windows) lies within the turn.
      for (const result of [paced, unpaced]) {
        expect(result.commits).toBeGreaterThan(0);
        expect(result.textCommitSpanMs).toBeGreaterThan(0);
        expect(result.textCommitSpanMs).toBeLessThanOrEqual(result.wallMs);
      }
      expect(paced.commits).toBeLessThan(unpaced.commits);
      for (const result of [paced, unpaced]) {
        const { medianMs, p95Ms, p99Ms, maxMs } = result.addedLatency;
        expect(medianMs).toBeGreaterThanOrEqual(0);
        expect(medianMs).toBeLessThanOrEqual(p95Ms);
        expect(p95Ms).toBeLessThanOrEqual(p99Ms);
        expect(p99Ms).toBeLessThanOrEqual(maxMs);
      }
      // Pacing holds deltas: the median delta waits; unpaced, it is shown in the same tick or so.
      expect(paced.addedLatency.medianMs).toBeGreaterThan(unpaced.addedLatency.medianMs);
    },
    60_000,
  );
});
