import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as durableChat from 'durable-chat';
import type { BenchResults } from './bench-results.js';
import { benchBundleSize, SIZE_GUARD_BYTES } from './bundle-size.js';
import { cliArgs } from './cli-args.js';
import { VARIANT_NAMES, type VariantName } from './clients/client-variant.js';
import {
  CPU_GUARD_RATIO,
  CPU_GUARD_RATIO_UNMERGED,
  cpuGuardViolations,
  sizeGuardViolations,
} from './guard.js';
import { renderReport } from './report.js';
import { benchFirstChunk } from './scenarios/first-chunk.js';
import { benchFollowUp } from './scenarios/follow-up.js';
import { benchLongTurn } from './scenarios/long-turn.js';
import { benchRenders, RENDERS_PACINGS } from './scenarios/renders.js';
import { benchResume } from './scenarios/resume.js';
import { benchScale } from './scenarios/scale.js';
import { benchThroughput, type StreamShape } from './scenarios/throughput.js';
import { targetChecks } from './targets.js';

/**
 * `npm run bench [-- --quick] [-- --only=throughput,first-chunk,follow-up,resume,renders,scale,long-turn,size]`
 * Prints the tables and writes bench/results.json (a quick or partial run: .tmp/). Exits 1
 * when any fixture check fails. `tsx bench/run.ts --print [--quick|--partial]` prints the
 * tables of the last such run again.
 */
const SCENARIOS = [
  'throughput',
  'first-chunk',
  'follow-up',
  'resume',
  'renders',
  'scale',
  'long-turn',
  'size',
] as const;
type Scenario = (typeof SCENARIOS)[number];

const args = process.argv.slice(2);
const options = cliArgs(args);
// Only a full run with its own settings writes bench/results.json (the figures the docs
// quote). The quick run (CI's guard) and partial runs (`--only`, `--runs=`, `--variants=`…)
// write under .tmp/, so an A/B never overwrites the full run's samples.
const partial = [...options.keys()].some((key) => key !== 'quick' && key !== 'print');
const outputName = options.has('quick')
  ? '../.tmp/bench-quick.json'
  : partial
    ? '../.tmp/bench-partial.json'
    : './results.json';
const output = fileURLToPath(new URL(outputName, import.meta.url));
if (options.has('print')) {
  // Prints the tables of the last run again (for the docs) without measuring anything.
  const saved = JSON.parse(await readFile(output, 'utf8')) as { results: BenchResults };
  console.log(renderReport(saved.results));
  process.exit(0);
}
const quick = options.has('quick');
// The quick run is CI's regression guard: its figures go to .tmp/, never over the full run's.
const only = new Set<string>(options.get('only')?.split(',') ?? SCENARIOS);
const wanted = (scenario: Scenario) => only.has(scenario);

const settings = quick
  ? {
      runs: 3,
      // As long as the full run's turns: on shorter ones the JIT's work (background threads
      // count as the client's CPU) weighs more on durable-chat's larger hot path than on the
      // floor's, and 50,000 deltas read ~0.15x higher than 100,000 in the same CI run.
      deltas: 100_000,
      warmupDeltas: 10_000,
      warmupTurns: 1,
      firstChunkRuns: 6,
      firstChunkRounds: 1,
      followUpRuns: 4,
      followUpRounds: 1,
      resumeRuns: 2,
      scaleRuns: 1,
      sessions: 100,
      scaleDeltas: 20,
      rendersRuns: 1,
      rendersDeltas: 200,
      longTurnRuns: 1,
      longTurnDeltas: 100_000,
    }
  : {
      runs: 5,
      deltas: 100_000,
      warmupDeltas: 10_000,
      // The measured turn is each client's second; `--warmupTurns=2` measures its third, past
      // the re-optimising that follows the first turn's end (a diagnostic: docs/performance.md).
      warmupTurns: 1,
      firstChunkRuns: 60,
      firstChunkRounds: 6,
      followUpRuns: 30,
      followUpRounds: 3,
      resumeRuns: 5,
      scaleRuns: 5,
      sessions: 1000,
      scaleDeltas: 100,
      rendersRuns: 5,
      rendersDeltas: 600,
      longTurnRuns: 7,
      longTurnDeltas: 1_000_000,
    };

// `--runs=3 --deltas=50000` (any numeric setting): override one setting, for a quick A/B.
for (const [key, value] of options) {
  if (key in settings && /^\d+$/.test(value)) (settings as Record<string, number>)[key] = Number(value);
}

const SHAPES: StreamShape[] = [
  { label: '100', batchSize: 100, tail: 'live', consumes: ['chunks', 'reducer'] },
  { label: '1 (live)', batchSize: 1, tail: 'live', consumes: ['chunks', 'reducer'] },
  { label: '100 (backlog)', batchSize: 100, tail: 'end', consumes: ['chunks'] },
];
// For a quick A/B: `--shapes=100,backlog`, `--variants=durable-chat,floor`, `--no-reducer`.
const listArg = (name: string) => options.get(name)?.split(',');
const shapeFilter = listArg('shapes')?.map((key) => SHAPES.find((shape) => shape.label.includes(key))?.label);
const variantFilter = listArg('variants');
const noReducer = options.has('no-reducer');
const pacingFilter = listArg('pacings');
const pathFilter = listArg('paths');

const log = (line: string) => console.log(line);
const started = performance.now();

// The transport is written alongside this bench; without it the other two still run.
const variants: VariantName[] = VARIANT_NAMES.filter(
  (name) => name !== 'durable-chat' || typeof durableChat.SessionChatTransport === 'function',
);
if (!variants.includes('durable-chat'))
  log('durable-chat does not export SessionChatTransport: variant (a) skipped');

const machine = {
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model ?? 'unknown',
  node: process.version,
  totalMemoryBytes: totalmem(),
  loadAverageAtStart: loadavg(),
};
log(
  `machine: ${machine.cpus} x ${machine.cpuModel}, node ${machine.node}, load ${machine.loadAverageAtStart.map((v) => v.toFixed(2)).join(' ')}`,
);
log(`settings: ${quick ? 'quick' : 'full'} ${JSON.stringify(settings)}`);

const results: BenchResults = {
  throughput: [],
  firstChunk: [],
  followUp: [],
  resume: [],
  renders: [],
  scale: [],
  longTurn: [],
  bundleSize: [],
};
const measureThroughput = (shapes: StreamShape[], runs: number) =>
  benchThroughput({
    runs,
    deltas: settings.deltas,
    warmupDeltas: settings.warmupDeltas,
    warmupTurns: settings.warmupTurns,
    // The quick run (CI's guard) reads chunks only: the reducer's cost is the AI SDK's.
    shapes: shapes.map((shape) => (noReducer || quick ? { ...shape, consumes: ['chunks' as const] } : shape)),
    // The guard needs durable-chat (merged and not) and both floors; the quick run skips the
    // platform client to stay cheap.
    variants: variants.filter(
      (name) =>
        (variantFilter === undefined || variantFilter.includes(name)) && (!quick || name !== 'trigger'),
    ),
    // The panel's cost is reported, not guarded: the full run measures it beside the rest.
    chunkOnlyVariants: variants.includes('durable-chat')
      ? [
          'floor-stream',
          'durable-chat-unmerged',
          // With `--variants=`, only when named there (it is the slowest of them).
          ...(quick || (variantFilter !== undefined && !variantFilter.includes('durable-chat-devtools'))
            ? []
            : (['durable-chat-devtools'] as const)),
          // An A/B against another build, in the same run: DURABLE_CHAT_BASELINE=<its dist/index.js>.
          ...(process.env.DURABLE_CHAT_BASELINE
            ? (['durable-chat-baseline', 'durable-chat-baseline-unmerged'] as const)
            : []),
        ]
      : ['floor-stream'],
    log,
  });
if (wanted('throughput')) {
  log('throughput (scenarios 1 and 2)');
  results.throughput = await measureThroughput(
    SHAPES.filter((shape) => shapeFilter === undefined || shapeFilter.includes(shape.label)),
    settings.runs,
  );
}
if (wanted('first-chunk')) {
  log('time to first chunk (scenario 3)');
  results.firstChunk = await benchFirstChunk({
    runs: settings.firstChunkRuns,
    rounds: settings.firstChunkRounds,
    variants,
    log,
  });
}
if (wanted('follow-up')) {
  log('follow-up turns: first chunk of turn 1 and turn 3 in one chat, 50 ms per response (scenario 3b)');
  results.followUp = await benchFollowUp({
    runs: settings.followUpRuns,
    rounds: settings.followUpRounds,
    // The floor here reads while it appends (as durable-chat does); the plain floor appends,
    // then reads: one round trip more, for scale.
    variants: [...variants, 'floor-overlap'],
    log,
  });
}
if (wanted('resume')) {
  log('resume (scenario 4)');
  results.resume = await benchResume({ runs: settings.resumeRuns, variants, log });
}
if (wanted('renders')) {
  log('renders (scenario 5)');
  results.renders = await benchRenders({
    runs: settings.rendersRuns,
    deltas: settings.rendersDeltas,
    // `--pacings=4,burst`, `--paths=useChat`: a quick A/B of some cells. The quick run (CI)
    // checks both paths at the bench's usual pace only.
    pacings: RENDERS_PACINGS.filter((pacing) =>
      pacingFilter === undefined
        ? !quick || pacing.label === '4 ms'
        : pacingFilter.some((key) => pacing.label.startsWith(key)),
    ),
    paths: (['useDurableChat', 'useChat'] as const).filter(
      (path) => pathFilter === undefined || pathFilter.includes(path),
    ),
    extraThrottles: listArg('throttles')?.map(Number),
    log,
  });
}
if (wanted('scale')) {
  log('scale (scenario 6)');
  results.scale = await benchScale({
    runs: settings.scaleRuns,
    sessions: settings.sessions,
    deltas: settings.scaleDeltas,
    intervalMs: 40,
    // The floors a ChatTransport cannot go below: the stream it must return, and the stream
    // with the read opened while the append is in flight (what keeps a held append from
    // holding back a reply, as durable-chat does).
    // `--variants=` narrows it too (the baseline build joins with DURABLE_CHAT_BASELINE).
    variants: (
      [
        ...variants,
        'floor-stream',
        'floor-overlap',
        ...(process.env.DURABLE_CHAT_BASELINE ? (['durable-chat-baseline'] as const) : []),
      ] as VariantName[]
    ).filter((name) => variantFilter === undefined || variantFilter.includes(name)),
    log,
  });
}
if (wanted('long-turn')) {
  log('long turn (scenario 7)');
  results.longTurn = await benchLongTurn({
    runs: settings.longTurnRuns,
    deltas: settings.longTurnDeltas,
    warmupDeltas: settings.warmupDeltas,
    variants: variants.filter((name) => name !== 'trigger'),
    log,
  });
}

if (wanted('size')) {
  log('bundle size: what an app bundles for the client (gzip, peers external)');
  results.bundleSize = await benchBundleSize(log);
}

const durationSeconds = (performance.now() - started) / 1000;
log('');
log(renderReport(results));
log('');
log(
  `finished in ${durationSeconds.toFixed(0)} s; load average at the end ${loadavg()
    .map((v) => v.toFixed(2))
    .join(' ')}`,
);

const report = {
  generatedAt: new Date().toISOString(),
  command: `npm run bench${args.length > 0 ? ` -- ${args.join(' ')}` : ''}`,
  quick,
  settings,
  machine: { ...machine, loadAverageAtEnd: loadavg() },
  durationSeconds,
  targets: targetChecks(results),
  results,
};
await mkdir(dirname(output), { recursive: true });
await writeFile(output, `${JSON.stringify(report, null, 2)}\n`);
log(`wrote ${output}`);

// CI's regression guard. A shape over the limit is measured again with more runs before it
// fails the run, so one noisy sample on a shared machine does not.
if (quick && wanted('throughput')) {
  let violations = cpuGuardViolations(results.throughput);
  if (violations.length > 0) {
    log(
      `guard: ${violations.map((v) => `${v.shape} (${v.variant}) at ${v.ratio.toFixed(2)}x`).join(', ')} the floor; measuring again`,
    );
    const again = await measureThroughput(
      SHAPES.filter((shape) => violations.some((v) => v.shape === shape.label)),
      settings.runs * 2,
    );
    violations = cpuGuardViolations(again);
  }
  if (violations.length > 0) {
    console.error(
      `bench guard FAILED: durable-chat's CPU per chunk is over ${CPU_GUARD_RATIO}x the floor's (${violations
        .map((v) => `${v.shape} (${v.variant}): ${v.ratio.toFixed(2)}x`)
        .join(', ')})`,
    );
    process.exitCode = 1;
  } else
    log(
      `bench guard: CPU per chunk within ${CPU_GUARD_RATIO}x the floor in every shape (${CPU_GUARD_RATIO_UNMERGED}x with coalesceDeltas off)`,
    );
}
if (quick && wanted('size')) {
  const over = sizeGuardViolations(results.bundleSize ?? []);
  if (over.length > 0) {
    console.error(`bench guard FAILED: ${over.join('; ')}`);
    process.exitCode = 1;
  } else
    log(`bench guard: the client bundle is within ${SIZE_GUARD_BYTES.toLocaleString('en-US')} bytes gzip`);
}

// Gaps (a part not built yet) are reported, not failed; a wrong answer fails the run.
const failed = [
  ...results.throughput,
  ...results.firstChunk,
  ...(results.followUp ?? []),
  ...results.resume,
  ...results.renders,
  ...results.scale,
  ...(results.longTurn ?? []),
  ...(results.bundleSize ?? []),
].filter((cell) => cell.error !== undefined && !cell.error.startsWith('dev server unavailable'));
if (failed.length > 0) {
  console.error(`bench: ${failed.length} measurement(s) FAILED their fixture check or crashed; see above`);
  process.exitCode = 1;
}
