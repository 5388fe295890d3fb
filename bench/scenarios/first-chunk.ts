import { runWorkerJob, startFixtureChild } from '../child-process.js';
import type { VariantName } from '../clients/client-variant.js';
import type { TurnSpec } from '../fixture-turn.js';
import type { FirstChunkJob, FirstChunkResult } from '../jobs/first-chunk-job.js';
import { median, rotate } from '../stats.js';
import { startEchoServerChild } from './echo-server.js';

export interface FirstChunkCell {
  server: 'fixture' | 'dev-server';
  variant: VariantName;
  runs: number;
  firstChunkMs: number;
  p90Ms: number;
  samplesMs: number[];
  error?: string;
}

export interface FirstChunkOptions {
  /** Sends per variant, split over `rounds` worker processes. */
  runs: number;
  rounds: number;
  variants: VariantName[];
  log: (line: string) => void;
}

function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
}

async function measure(
  server: FirstChunkCell['server'],
  base: Omit<FirstChunkJob, 'variant' | 'runs'>,
  options: FirstChunkOptions,
): Promise<FirstChunkCell[]> {
  const samples = new Map<VariantName, number[]>();
  const errors = new Map<VariantName, string>();
  const perRound = Math.max(1, Math.ceil(options.runs / options.rounds));
  for (let round = 0; round < options.rounds; round++) {
    for (const variant of rotate(options.variants, round)) {
      if (errors.has(variant)) continue;
      try {
        const job: FirstChunkJob = { ...base, variant, runs: perRound };
        const { firstChunkMs } = await runWorkerJob<FirstChunkResult>(job);
        samples.set(variant, [...(samples.get(variant) ?? []), ...firstChunkMs]);
      } catch (error) {
        errors.set(variant, error instanceof Error ? error.message : String(error));
        options.log(`  first chunk ${server} ${variant}: FAILED ${errors.get(variant)}`);
      }
    }
  }
  return options.variants.map((variant) => {
    const values = samples.get(variant) ?? [];
    const cell: FirstChunkCell = {
      server,
      variant,
      runs: values.length,
      firstChunkMs: median(values),
      p90Ms: percentile(values, 0.9),
      samplesMs: values,
    };
    const error = errors.get(variant);
    if (error !== undefined) cell.error = error;
    else options.log(`  first chunk ${server} ${variant}: median ${cell.firstChunkMs.toFixed(2)} ms`);
    return cell;
  });
}

/**
 * Scenario 3: `send` to first text-delta. On the dev server with its echo agent (the
 * real protocol, server work included), and on the fixture server (client cost alone).
 * The `floor` variant is the raw baseline: fetch append, then fetch `.out`.
 */
export async function benchFirstChunk(options: FirstChunkOptions): Promise<FirstChunkCell[]> {
  const cells: FirstChunkCell[] = [];
  const fixtureTurn: TurnSpec = { name: 'short', deltas: 50, batchSize: 1 };
  const fixture = await startFixtureChild([fixtureTurn]);
  try {
    const base = { kind: 'first-chunk' as const, baseUrl: fixture.url, fixtureTurn, warmups: 5 };
    cells.push(...(await measure('fixture', base, options)));
  } finally {
    await fixture.child.stop();
  }
  let echo: Awaited<ReturnType<typeof startEchoServerChild>>;
  try {
    echo = await startEchoServerChild();
  } catch (error) {
    const message = `dev server unavailable: ${error instanceof Error ? error.message : String(error)}`;
    options.log(`  first chunk dev-server: ${message}`);
    for (const variant of options.variants) {
      cells.push({
        server: 'dev-server',
        variant,
        runs: 0,
        firstChunkMs: Number.NaN,
        p90Ms: Number.NaN,
        samplesMs: [],
        error: message,
      });
    }
    return cells;
  }
  try {
    const base = { kind: 'first-chunk' as const, baseUrl: echo.url, devServer: echo.devServer, warmups: 5 };
    cells.push(...(await measure('dev-server', base, options)));
  } finally {
    await echo.child.stop();
  }
  return cells;
}
