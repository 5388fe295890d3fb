import { runWorkerJob, startFixtureChild } from '../child-process.js';
import type { VariantName } from '../clients/client-variant.js';
import type { TurnSpec } from '../fixture-turn.js';
import type { ThroughputJob, ThroughputResult } from '../jobs/throughput-job.js';
import { median, rotate } from '../stats.js';

/** How the turn arrives: records per batch, where the tail is, and who reads it. */
export interface StreamShape {
  /** Table label, e.g. `100` or `100 (backlog)`. */
  label: string;
  batchSize: number;
  tail: 'live' | 'end';
  consumes: ThroughputJob['consume'][];
}

export interface ThroughputOptions {
  runs: number;
  deltas: number;
  warmupDeltas: number;
  /**
   * Warm-up turns before the measured one (default 1). A client's first turn ends by
   * deoptimising code specialised for the shapes it saw until then, so the turn after it
   * still pays for re-optimising; with 2 the measured turn is the third (docs/performance.md).
   */
  warmupTurns?: number;
  shapes: StreamShape[];
  variants: VariantName[];
  /** Measured only when reading chunks (not through the reducer), e.g. `floor-stream`. */
  chunkOnlyVariants: VariantName[];
  log: (line: string) => void;
}

/** Medians over the runs of one (batch size, consumer, variant) cell. */
export interface ThroughputCell {
  shape: string;
  batchSize: number;
  consume: ThroughputJob['consume'];
  variant: VariantName;
  runs: number;
  wallMs: number;
  chunksPerSecond: number;
  cpuUsPerChunk: number;
  peakRssBytes: number;
  /** Peak RSS minus the RSS right before the turn: what the turn itself cost. */
  turnRssBytes: number;
  /** Chunks the consumer received (median): fewer than the turn's when deltas were merged. */
  deliveredChunks: number;
  samples: ThroughputResult[];
  /** Why the cell has no figures, when it has none. */
  error?: string;
}

function summarize(
  base: Omit<
    ThroughputCell,
    | 'runs'
    | 'wallMs'
    | 'chunksPerSecond'
    | 'cpuUsPerChunk'
    | 'peakRssBytes'
    | 'turnRssBytes'
    | 'deliveredChunks'
  >,
): ThroughputCell {
  const { samples } = base;
  return {
    ...base,
    runs: samples.length,
    wallMs: median(samples.map((sample) => sample.wallMs)),
    chunksPerSecond: median(samples.map((sample) => sample.chunks / (sample.wallMs / 1000))),
    cpuUsPerChunk: median(samples.map((sample) => sample.cpuUs / sample.chunks)),
    peakRssBytes: median(samples.map((sample) => sample.peakRssBytes)),
    turnRssBytes: median(samples.map((sample) => sample.peakRssBytes - sample.baselineRssBytes)),
    deliveredChunks: median(samples.map((sample) => sample.delivered ?? sample.chunks)),
  };
}

/**
 * Scenarios 1 and 2. One fixture server per stream shape; every client variant reads the
 * same bytes from it, each run in a fresh process, the variants' order rotated per run.
 */
export async function benchThroughput(options: ThroughputOptions): Promise<ThroughputCell[]> {
  const cells: ThroughputCell[] = [];
  for (const { label: shape, batchSize, tail, consumes } of options.shapes) {
    const turn: TurnSpec = { name: `main-b${batchSize}-${tail}`, deltas: options.deltas, batchSize, tail };
    const warmup: TurnSpec = {
      name: `warm-b${batchSize}-${tail}`,
      deltas: options.warmupDeltas,
      batchSize,
      tail,
    };
    const server = await startFixtureChild([turn, warmup]);
    try {
      const samples = new Map<string, ThroughputResult[]>();
      const errors = new Map<string, string>();
      for (let run = 0; run < options.runs; run++) {
        for (const variant of rotate([...options.variants, ...options.chunkOnlyVariants], run)) {
          for (const consume of consumes) {
            const key = `${consume}/${variant}`;
            if (errors.has(key) || (consume !== 'chunks' && options.chunkOnlyVariants.includes(variant)))
              continue;
            const job: ThroughputJob = {
              kind: 'throughput',
              variant,
              consume,
              baseUrl: server.url,
              warmup,
              turn,
              ...(options.warmupTurns === undefined ? {} : { warmupTurns: options.warmupTurns }),
            };
            try {
              const result = await runWorkerJob<ThroughputResult>(job);
              samples.set(key, [...(samples.get(key) ?? []), result]);
              options.log(
                `  ${shape} ${consume} ${variant} run ${run + 1}: ${result.wallMs.toFixed(0)} ms, ${(result.cpuUs / result.chunks).toFixed(2)} µs/chunk`,
              );
            } catch (error) {
              // A wrong answer or a crash is reported in the table, never timed.
              errors.set(key, error instanceof Error ? error.message : String(error));
              options.log(`  ${shape} ${consume} ${variant}: FAILED ${errors.get(key)}`);
            }
          }
        }
      }
      for (const consume of consumes) {
        const measured =
          consume === 'chunks' ? [...options.variants, ...options.chunkOnlyVariants] : options.variants;
        for (const variant of measured) {
          const key = `${consume}/${variant}`;
          const error = errors.get(key);
          cells.push({
            ...summarize({ shape, batchSize, consume, variant, samples: samples.get(key) ?? [] }),
            ...(error === undefined ? {} : { error }),
          });
        }
      }
    } finally {
      await server.child.stop();
    }
  }
  return cells;
}
