import { runWorkerJob, startFixtureChild } from '../child-process.js';
import type { VariantName } from '../clients/client-variant.js';
import type { ServedTurnSpec } from '../fixture-server.js';
import type { ScaleJob, ScaleResult } from '../jobs/scale-job.js';
import { median, rotate } from '../stats.js';

export interface ScaleCell {
  variant: VariantName;
  sessions: number;
  runs: number;
  wallMs: number;
  /** Client CPU over the run, as a share of one core. */
  cpuPercent: number;
  cpuUsPerChunk: number;
  peakRssBytes: number;
  /** (peak RSS - RSS before the sessions started) / sessions. */
  rssPerSessionBytes: number;
  /** The fixture server's own CPU over the same runs, share of one core. */
  serverCpuPercent: number;
  samples: ScaleResult[];
  error?: string;
}

export interface ScaleOptions {
  runs: number;
  sessions: number;
  deltas: number;
  intervalMs: number;
  variants: VariantName[];
  log: (line: string) => void;
}

async function serverCpuUs(url: string): Promise<number> {
  const answer = (await (await fetch(`${url}/bench/process`)).json()) as {
    cpu: { user: number; system: number };
  };
  return answer.cpu.user + answer.cpu.system;
}

/**
 * Scenario 6: `sessions` chats stream a paced turn at once into one client process.
 * The pace is model speed, so the figures are the client's steady cost per live chat.
 */
export async function benchScale(options: ScaleOptions): Promise<ScaleCell[]> {
  const turn: ServedTurnSpec = {
    name: 'scale',
    deltas: options.deltas,
    batchSize: 1,
    intervalMs: options.intervalMs,
  };
  const server = await startFixtureChild([turn]);
  const samples = new Map<VariantName, ScaleResult[]>();
  const serverShares = new Map<VariantName, number[]>();
  const errors = new Map<VariantName, string>();
  try {
    for (let run = 0; run < options.runs; run++) {
      for (const variant of rotate(options.variants, run)) {
        if (errors.has(variant)) continue;
        const job: ScaleJob = {
          kind: 'scale',
          variant,
          baseUrl: server.url,
          sessions: options.sessions,
          turn,
        };
        try {
          const before = await serverCpuUs(server.url);
          const result = await runWorkerJob<ScaleResult>(job);
          const serverShare = ((await serverCpuUs(server.url)) - before) / 1000 / result.wallMs;
          samples.set(variant, [...(samples.get(variant) ?? []), result]);
          serverShares.set(variant, [...(serverShares.get(variant) ?? []), serverShare]);
          options.log(
            `  scale ${variant} run ${run + 1}: ${result.wallMs.toFixed(0)} ms, ${(result.cpuUs / result.wallMs / 10).toFixed(1)}% CPU, ${(result.peakRssBytes / 2 ** 20).toFixed(0)} MiB peak`,
          );
        } catch (error) {
          errors.set(variant, error instanceof Error ? error.message : String(error));
          options.log(`  scale ${variant}: FAILED ${errors.get(variant)}`);
        }
      }
    }
  } finally {
    await server.child.stop();
  }
  return options.variants.map((variant) => {
    const list = samples.get(variant) ?? [];
    const cell: ScaleCell = {
      variant,
      sessions: options.sessions,
      runs: list.length,
      wallMs: median(list.map((sample) => sample.wallMs)),
      cpuPercent: median(list.map((sample) => sample.cpuUs / sample.wallMs / 10)),
      cpuUsPerChunk: median(list.map((sample) => sample.cpuUs / sample.chunks)),
      peakRssBytes: median(list.map((sample) => sample.peakRssBytes)),
      rssPerSessionBytes: median(
        list.map((sample) => (sample.peakRssBytes - sample.baselineRssBytes) / sample.sessions),
      ),
      serverCpuPercent: median((serverShares.get(variant) ?? []).map((share) => share * 100)),
      samples: list,
    };
    const error = errors.get(variant);
    if (error !== undefined) cell.error = error;
    return cell;
  });
}
