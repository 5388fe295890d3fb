import { runWorkerJob, startFixtureChild } from '../child-process.js';
import type { ServedTurnSpec } from '../fixture-server.js';
import type { LatencySummary, RendersJob, RendersPath, RendersResult } from '../jobs/renders-job.js';
import { median } from '../stats.js';

/** How the fixture server paces the reply. */
export interface RendersPacing {
  /** `4 ms` (a live model, ~215 chunks/s here), `1 ms`, or `burst` (a backlog: all at once). */
  label: string;
  /** One record every `intervalMs`; undefined: 100 records per event, as fast as the socket goes. */
  intervalMs: number | undefined;
}

export const RENDERS_PACINGS: RendersPacing[] = [
  { label: '4 ms', intervalMs: 4 },
  { label: '1 ms', intervalMs: 1 },
  { label: 'burst', intervalMs: undefined },
];

/** The path's default, `throttle: 0`, or an explicit window in ms (for an A/B of windows). */
export type RendersThrottle = 'default' | 'none' | `${number} ms`;

/** Issue 23's render budget: one React commit per window while text streams, plus a few per turn. */
export const RENDER_BUDGET = { windowMs: 40, perTurn: 12 } as const;

export interface RendersCell {
  path: RendersPath;
  throttle: RendersThrottle;
  pacing: string;
  runs: number;
  rendersPerThousandChunks: number;
  /** React commits per turn, send to final render (median of the runs). Missing in results before issue 23, as the two below. */
  commitsPerTurn?: number;
  /** Commits per second of the turn (send to final render), median of the runs. */
  commitsPerSecond?: number;
  /**
   * Commits beyond one per `RENDER_BUDGET.windowMs` window of the span over which the reply's
   * text grew on screen (first to last commit that showed more text: ⌊span / window⌋ + 1
   * windows): what status and part boundaries cost. A pacer that committed more often than once
   * per window would show here. Median of the runs, and the worst run.
   */
  commitsOverWindows?: { median: number; max: number };
  /** Text deltas per second as they reached the client (the throttle is a time window). */
  chunksPerSecond: number;
  /** The worker's CPU per chunk from the send to the final render (polling included, the same for every cell). */
  cpuUsPerChunk: number;
  /**
   * From a delta's arrival to the first commit showing it: the median of the runs' medians,
   * p95s and p99s, and the worst delta of all runs.
   */
  addedLatency: LatencySummary;
  samples: RendersResult[];
  error?: string;
}

export interface RendersOptions {
  runs: number;
  deltas: number;
  pacings?: RendersPacing[];
  paths?: RendersPath[];
  /** Windows (ms) measured besides the default and none. */
  extraThrottles?: number[];
  log: (line: string) => void;
}

function turnFor(pacing: RendersPacing, deltas: number): ServedTurnSpec {
  const name = `renders-${pacing.label.replace(/\W+/g, '')}`;
  return pacing.intervalMs === undefined
    ? { name, deltas, batchSize: 100, tail: 'end' }
    : { name, deltas, batchSize: 1, intervalMs: pacing.intervalMs };
}

/**
 * Scenario 5: renders per 1,000 chunks and the latency they add, through both React paths
 * (`useDurableChat`; `useChat` over `useChatSession`) in a real React root, each with its
 * default throttle and with none (`throttle: 0`), on turns paced at several rates.
 */
export async function benchRenders(options: RendersOptions): Promise<RendersCell[]> {
  const pacings = options.pacings ?? RENDERS_PACINGS;
  const turns = pacings.map((pacing) => turnFor(pacing, options.deltas));
  const server = await startFixtureChild(turns);
  const cells: RendersCell[] = [];
  try {
    for (const [index, pacing] of pacings.entries()) {
      const turn = turns[index] as ServedTurnSpec;
      for (const path of options.paths ?? (['useDurableChat', 'useChat'] as const)) {
        const throttles: RendersThrottle[] = [
          'default',
          'none',
          ...(options.extraThrottles ?? []).map((ms) => `${ms} ms` as const),
        ];
        for (const throttle of throttles) {
          cells.push(await measureCell(server.url, turn, pacing, path, throttle, options));
        }
      }
    }
  } finally {
    await server.child.stop();
  }
  return cells;
}

/** Commits beyond one per window of the span over which the reply's text grew on screen. */
function overWindows(sample: RendersResult): number {
  return sample.commits - (Math.floor(sample.textCommitSpanMs / RENDER_BUDGET.windowMs) + 1);
}

async function measureCell(
  baseUrl: string,
  turn: ServedTurnSpec,
  pacing: RendersPacing,
  path: RendersPath,
  throttle: RendersThrottle,
  options: RendersOptions,
): Promise<RendersCell> {
  const samples: RendersResult[] = [];
  let error: string | undefined;
  for (let run = 0; run < options.runs && error === undefined; run++) {
    const job: RendersJob = {
      kind: 'renders',
      baseUrl,
      turn,
      path,
      throttleMs: throttle === 'default' ? undefined : throttle === 'none' ? 0 : Number.parseFloat(throttle),
    };
    try {
      samples.push(await runWorkerJob<RendersResult>(job));
    } catch (caught) {
      error = caught instanceof Error ? caught.message : String(caught);
    }
  }
  const cell: RendersCell = {
    path,
    throttle,
    pacing: pacing.label,
    runs: samples.length,
    rendersPerThousandChunks: median(samples.map((sample) => (sample.renders / sample.chunks) * 1000)),
    commitsPerTurn: median(samples.map((sample) => sample.commits)),
    commitsPerSecond: median(samples.map((sample) => sample.commits / (sample.wallMs / 1000))),
    commitsOverWindows: {
      median: median(samples.map(overWindows)),
      max: samples.length === 0 ? Number.NaN : Math.max(...samples.map(overWindows)),
    },
    chunksPerSecond: median(samples.map((sample) => sample.deltasPerSecond)),
    cpuUsPerChunk: median(samples.map((sample) => sample.cpuUsPerChunk)),
    addedLatency: {
      medianMs: median(samples.map((sample) => sample.addedLatency.medianMs)),
      p95Ms: median(samples.map((sample) => sample.addedLatency.p95Ms)),
      p99Ms: median(samples.map((sample) => sample.addedLatency.p99Ms)),
      maxMs:
        samples.length === 0 ? Number.NaN : Math.max(...samples.map((sample) => sample.addedLatency.maxMs)),
    },
    samples,
  };
  if (error !== undefined) cell.error = error;
  const { addedLatency: added } = cell;
  options.log(
    error === undefined
      ? `  renders ${path} ${throttle} @ ${pacing.label}: ${cell.rendersPerThousandChunks.toFixed(1)} per 1,000 chunks, ${cell.commitsPerTurn} commits per turn (${cell.commitsOverWindows?.median} over one per ${RENDER_BUDGET.windowMs} ms, worst ${cell.commitsOverWindows?.max}), ${cell.commitsPerSecond?.toFixed(1)}/s at ${cell.chunksPerSecond.toFixed(0)} chunks/s, ${cell.cpuUsPerChunk.toFixed(0)} µs CPU/chunk; added latency median ${added.medianMs.toFixed(1)} ms, p95 ${added.p95Ms.toFixed(1)} ms, p99 ${added.p99Ms.toFixed(1)} ms, max ${added.maxMs.toFixed(1)} ms`
      : `  renders ${path} ${throttle} @ ${pacing.label}: FAILED ${error}`,
  );
  return cell;
}
