import { runWorkerJob, startFixtureChild } from '../child-process.js';
import type { ServedTurnSpec } from '../fixture-server.js';
import type { RendersJob, RendersResult } from '../jobs/renders-job.js';
import { median } from '../stats.js';

export interface RendersCell {
  throttle: 'default' | 'none';
  runs: number;
  rendersPerThousandChunks: number;
  /** Chunks per second the turn arrived at (the throttle is a time window). */
  chunksPerSecond: number;
  samples: RendersResult[];
  error?: string;
}

export interface RendersOptions {
  runs: number;
  deltas: number;
  intervalMs: number;
  log: (line: string) => void;
}

/**
 * Scenario 5: renders per 1,000 chunks through `useDurableChat` in a real React root,
 * with the hook's default throttle and with none (`experimental_throttle: 0`), on a turn
 * paced at `intervalMs` per chunk.
 */
export async function benchRenders(options: RendersOptions): Promise<RendersCell[]> {
  const turn: ServedTurnSpec = {
    name: 'renders',
    deltas: options.deltas,
    batchSize: 1,
    intervalMs: options.intervalMs,
  };
  const server = await startFixtureChild([turn]);
  const cells: RendersCell[] = [];
  try {
    for (const throttle of ['default', 'none'] as const) {
      const samples: RendersResult[] = [];
      let error: string | undefined;
      for (let run = 0; run < options.runs && error === undefined; run++) {
        const job: RendersJob = {
          kind: 'renders',
          baseUrl: server.url,
          turn,
          throttleMs: throttle === 'none' ? 0 : undefined,
        };
        try {
          samples.push(await runWorkerJob<RendersResult>(job));
        } catch (caught) {
          error = caught instanceof Error ? caught.message : String(caught);
        }
      }
      const cell: RendersCell = {
        throttle,
        runs: samples.length,
        rendersPerThousandChunks: median(samples.map((sample) => (sample.renders / sample.chunks) * 1000)),
        chunksPerSecond: median(samples.map((sample) => sample.chunks / (sample.wallMs / 1000))),
        samples,
      };
      if (error !== undefined) cell.error = error;
      options.log(
        error === undefined
          ? `  renders ${throttle}: ${cell.rendersPerThousandChunks.toFixed(1)} per 1,000 chunks at ${cell.chunksPerSecond.toFixed(0)} chunks/s`
          : `  renders ${throttle}: FAILED ${error}`,
      );
      cells.push(cell);
    }
  } finally {
    await server.child.stop();
  }
  return cells;
}
