import { runWorkerJob, startFixtureChild } from '../child-process.js';
import type { VariantName } from '../clients/client-variant.js';
import { expectedReply, type TurnSpec } from '../fixture-turn.js';
import type { HashedReply, LongTurnJob, LongTurnResult } from '../jobs/long-turn-job.js';
import { median, rotate } from '../stats.js';
import { expectedTextHash } from '../verify-turn.js';

export interface LongTurnCell {
  variant: VariantName;
  deltas: number;
  runs: number;
  wallMs: number;
  cpuUsPerChunk: number;
  /** Highest RSS during the turn (sampled). */
  peakRssBytes: number;
  /** That peak minus the RSS right before the turn (after a GC): what the turn cost. */
  turnRssBytes: number;
  /** Heap + external after a full GC at 90% of the turn, minus before it (median). */
  retainedBytes: number;
  samples: LongTurnResult[];
  error?: string;
}

export interface LongTurnOptions {
  runs: number;
  deltas: number;
  warmupDeltas: number;
  variants: VariantName[];
  log: (line: string) => void;
}

/**
 * Scenario 7: one turn of `deltas` text deltas (100 records per batch, live tail) per fresh
 * process, read without keeping chunks. Its RSS growth shows whether a client retains
 * anything per chunk during a turn.
 */
export async function benchLongTurn(options: LongTurnOptions): Promise<LongTurnCell[]> {
  const turn: TurnSpec = { name: 'long-b100-live', deltas: options.deltas, batchSize: 100, tail: 'live' };
  const warmup: TurnSpec = {
    name: 'long-warm-b100-live',
    deltas: options.warmupDeltas,
    batchSize: 100,
    tail: 'live',
  };
  const server = await startFixtureChild([turn, warmup]);
  // Hashed here, so no worker ever holds the expected text.
  const hashed = (spec: TurnSpec): TurnSpec & { expected: HashedReply } => {
    const { chunkCount, deltas, text } = expectedReply(spec);
    return { ...spec, expected: { chunkCount, deltas, ...expectedTextHash(text) } };
  };
  const jobTurn = hashed(turn);
  const jobWarmup = hashed(warmup);
  const samples = new Map<VariantName, LongTurnResult[]>();
  const errors = new Map<VariantName, string>();
  try {
    for (let run = 0; run < options.runs; run++) {
      for (const variant of rotate(options.variants, run)) {
        if (errors.has(variant)) continue;
        const job: LongTurnJob = {
          kind: 'long-turn',
          variant,
          baseUrl: server.url,
          warmup: jobWarmup,
          turn: jobTurn,
        };
        try {
          const result = await runWorkerJob<LongTurnResult>(job);
          samples.set(variant, [...(samples.get(variant) ?? []), result]);
          options.log(
            `  long turn ${variant} run ${run + 1}: ${result.wallMs.toFixed(0)} ms, RSS +${((result.turnPeakRssBytes - result.baselineRssBytes) / 2 ** 20).toFixed(1)} MiB, retained at 90% ${(result.retainedBytes / 2 ** 20).toFixed(2)} MiB`,
          );
        } catch (error) {
          errors.set(variant, error instanceof Error ? error.message : String(error));
          options.log(`  long turn ${variant}: FAILED ${errors.get(variant)}`);
        }
      }
    }
  } finally {
    await server.child.stop();
  }
  return options.variants.map((variant) => {
    const list = samples.get(variant) ?? [];
    const cell: LongTurnCell = {
      variant,
      deltas: options.deltas,
      runs: list.length,
      wallMs: median(list.map((sample) => sample.wallMs)),
      cpuUsPerChunk: median(list.map((sample) => sample.cpuUs / sample.chunks)),
      peakRssBytes: median(list.map((sample) => sample.turnPeakRssBytes)),
      turnRssBytes: median(list.map((sample) => sample.turnPeakRssBytes - sample.baselineRssBytes)),
      retainedBytes: median(list.map((sample) => sample.retainedBytes)),
      samples: list,
    };
    const error = errors.get(variant);
    if (error !== undefined) cell.error = error;
    return cell;
  });
}
