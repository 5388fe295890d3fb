import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnBenchChild, startFixtureChild } from './child-process.js';
import { cliArgs } from './cli-args.js';
import type { VariantName } from './clients/client-variant.js';
import type { TurnSpec } from './fixture-turn.js';
import type { ThroughputJob, ThroughputResult } from './jobs/throughput-job.js';

/**
 * `npm run bench:profile -- [--variant=durable-chat] [--batch=100] [--tail=live|end]
 * [--consume=chunks|reducer] [--deltas=100000] [--top=30]`
 * Runs one throughput job under `--cpu-prof`, writes the profile to `.tmp/profiles/` (open it
 * in Chrome DevTools) and prints the top frames by self time, so a change to the hot path
 * can be judged by where the time goes, not only by the total.
 */
const args = cliArgs();
const variant = (args.get('variant') ?? 'durable-chat') as VariantName;
const batchSize = Number(args.get('batch') ?? 100);
const tail = (args.get('tail') ?? 'live') as 'live' | 'end';
const consume = (args.get('consume') ?? 'chunks') as ThroughputJob['consume'];
const deltas = Number(args.get('deltas') ?? 100_000);
const top = Number(args.get('top') ?? 30);

const turn: TurnSpec = { name: `prof-b${batchSize}-${tail}`, deltas, batchSize, tail };
const warmup: TurnSpec = { name: `profwarm-b${batchSize}-${tail}`, deltas: deltas / 10, batchSize, tail };
const directory = fileURLToPath(new URL('../.tmp/profiles/', import.meta.url));
await rm(directory, { recursive: true, force: true });

const server = await startFixtureChild([turn, warmup]);
try {
  const job: ThroughputJob = { kind: 'throughput', variant, consume, baseUrl: server.url, warmup, turn };
  const child = spawnBenchChild(
    './client-worker.ts',
    { BENCH_JOB: JSON.stringify(job) },
    { exposeGc: true, execArgv: ['--cpu-prof', '--cpu-prof-interval=50', `--cpu-prof-dir=${directory}`] },
  );
  const answer = await child.next<{ ok: true; result: ThroughputResult } | { ok: false; error: string }>();
  await child.stop();
  if (!answer.ok) throw new Error(answer.error);
  const { result } = answer;
  console.log(
    `${variant} ${consume} batch ${batchSize} ${tail}: ${(result.cpuUs / result.chunks).toFixed(2)} µs/chunk (profiler on: absolute figures are inflated)`,
  );
} finally {
  await server.child.stop();
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
const file = (await readdir(directory)).find((name) => name.endsWith('.cpuprofile'));
if (file === undefined) throw new Error(`no profile written to ${directory}`);
const profile = JSON.parse(await readFile(join(directory, file), 'utf8')) as { nodes: ProfileNode[] };
const self = new Map<string, number>();
let total = 0;
for (const node of profile.nodes) {
  const hits = node.hitCount ?? 0;
  total += hits;
  const { functionName, url, lineNumber } = node.callFrame;
  const where =
    url === '' ? '' : ` ${url.replace(/^.*\/(node_modules\/|dist\/|bench\/)/, '$1')}:${lineNumber + 1}`;
  const key = `${functionName || '(anonymous)'}${where}`;
  self.set(key, (self.get(key) ?? 0) + hits);
}
console.log(`top ${top} frames by self time (${total} samples), profile: ${join(directory, file)}`);
for (const [key, hits] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top))
  console.log(`${((100 * hits) / total).toFixed(1).padStart(5)}%  ${key}`);
