import { runWorkerJob, startFixtureChild } from '../child-process.js';
import type { VariantName } from '../clients/client-variant.js';
import type { TurnSpec } from '../fixture-turn.js';
import type { ResumeJob, ResumeResult } from '../jobs/resume-job.js';
import { median } from '../stats.js';

export type CutMode = 'destroy' | 'error-event';

export interface ResumeCell {
  cutMode: CutMode;
  variant: VariantName;
  runs: number;
  /** Median ms from the last chunk before the drop to the first chunk after it. */
  gapMs: number;
  maxGapMs: number;
  gapsMs: number[];
  error?: string;
}

export interface ResumeOptions {
  runs: number;
  variants: VariantName[];
  log: (line: string) => void;
}

/**
 * Scenario 4 on the fixture server: a 2,000-delta live-shape turn whose first connection
 * dies after record 1,000, either as a dead socket or as an SSE `error` event followed
 * by a clean close (both production behaviours). Each variant resumes in its own process.
 */
export async function benchResume(options: ResumeOptions): Promise<ResumeCell[]> {
  const cells: ResumeCell[] = [];
  for (const cutMode of ['destroy', 'error-event'] as const) {
    const turn = { name: `cut-${cutMode}`, deltas: 2000, batchSize: 1, cutAfterSeq: 1000, cutMode };
    const warmup: TurnSpec = { name: 'warm-resume', deltas: 2000, batchSize: 1 };
    const server = await startFixtureChild([turn, warmup]);
    try {
      for (const variant of options.variants) {
        const job: ResumeJob = {
          kind: 'resume',
          variant,
          baseUrl: server.url,
          warmup,
          turn,
          runs: options.runs,
        };
        try {
          const { gapsMs } = await runWorkerJob<ResumeResult>(job);
          const cell = {
            cutMode,
            variant,
            runs: gapsMs.length,
            gapMs: median(gapsMs),
            maxGapMs: Math.max(...gapsMs),
            gapsMs,
          };
          cells.push(cell);
          options.log(
            `  resume ${cutMode} ${variant}: median ${cell.gapMs.toFixed(1)} ms (max ${cell.maxGapMs.toFixed(1)})`,
          );
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          cells.push({
            cutMode,
            variant,
            runs: 0,
            gapMs: Number.NaN,
            maxGapMs: Number.NaN,
            gapsMs: [],
            error: message,
          });
          options.log(`  resume ${cutMode} ${variant}: FAILED ${message}`);
        }
      }
    } finally {
      await server.child.stop();
    }
  }
  return cells;
}
