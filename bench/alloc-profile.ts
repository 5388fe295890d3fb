import { mkdir, readFile, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { runWorkerJob, startFixtureChild } from './child-process.js';
import { cliArgs } from './cli-args.js';
import type { VariantName } from './clients/client-variant.js';
import type { ServedTurnSpec } from './fixture-server.js';
import type { ScaleJob, ScaleResult } from './jobs/scale-job.js';

/**
 * `npm run bench:alloc -- [--variants=durable-chat,floor-overlap] [--sessions=200]
 * [--deltas=100] [--top=25]`
 * What a concurrent chat allocates, garbage included: the scale job (every session streams a
 * paced turn at once) under V8's sampling heap profiler with freed objects kept in the
 * profile. Each variant runs twice, with 2-delta and `--deltas` turns: the first gives the
 * bytes per chat start (append, `.out` connect, stream set-up, teardown), the difference the
 * bytes per chunk. Peak RSS follows these more than the live heap: what a burst of starts
 * allocates survives scavenges and is promoted.
 */
const args = cliArgs();
const variants = (args.get('variants') ?? 'durable-chat,floor-overlap').split(',') as VariantName[];
const sessions = Number(args.get('sessions') ?? 200);
const deltas = Number(args.get('deltas') ?? 100);
const top = Number(args.get('top') ?? 25);
const SHORT = 2;
const directory = fileURLToPath(new URL('../.tmp/alloc/', import.meta.url));
await rm(directory, { recursive: true, force: true });
await mkdir(directory, { recursive: true });

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children?: ProfileNode[];
}

/** Bytes by frame (self) and by the innermost library or bench frame on the allocating stack. */
interface Tally {
  total: number;
  byFrame: Map<string, number>;
  byOwner: Map<string, number>;
}

function frameName({ functionName, url, lineNumber }: ProfileNode['callFrame']): string {
  const where = url.replace(/^.*\/(node_modules\/|dist\/|bench\/)/, '$1');
  return `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`;
}

async function tally(path: string): Promise<Tally> {
  const { head } = JSON.parse(await readFile(path, 'utf8')) as { head: ProfileNode };
  const result: Tally = { total: 0, byFrame: new Map(), byOwner: new Map() };
  const add = (map: Map<string, number>, key: string, bytes: number) =>
    map.set(key, (map.get(key) ?? 0) + bytes);
  const walk = (node: ProfileNode, owner: string) => {
    const name = frameName(node.callFrame);
    const own = /\b(dist|bench)\//.test(name) ? name : owner;
    if (node.selfSize > 0) {
      result.total += node.selfSize;
      add(result.byFrame, name, node.selfSize);
      add(result.byOwner, own, node.selfSize);
    }
    for (const child of node.children ?? []) walk(child, own);
  };
  walk(head, '(runtime: no library or bench frame on the stack)');
  return result;
}

/** `long` minus `short` (nothing, by default), per unit. */
function difference(
  long: Map<string, number>,
  per: number,
  short = new Map<string, number>(),
): [string, number][] {
  const keys = new Set([...long.keys(), ...short.keys()]);
  return [...keys].map((key) => [key, ((long.get(key) ?? 0) - (short.get(key) ?? 0)) / per]);
}

function print(title: string, rows: [string, number][]): void {
  console.log(title);
  for (const [key, bytes] of rows.sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${(bytes / 1024).toFixed(2).padStart(9)} KiB  ${key}`);
}

const turns: ServedTurnSpec[] = [SHORT, deltas].map((count) => ({
  name: `alloc-${count}`,
  deltas: count,
  batchSize: 1,
  intervalMs: 40,
}));
const server = await startFixtureChild(turns);
const tallies = new Map<string, Tally>();
try {
  for (const variant of variants) {
    for (const turn of turns) {
      const path = `${directory}${variant}-${turn.deltas}.heapprofile`;
      const job: ScaleJob = {
        kind: 'scale',
        variant,
        baseUrl: server.url,
        sessions,
        turn,
        allocationProfile: { path, intervalBytes: 1024 },
      };
      const result = await runWorkerJob<ScaleResult>(job);
      tallies.set(`${variant}-${turn.deltas}`, await tally(path));
      console.log(
        `${variant}, ${sessions} chats × ${turn.deltas} deltas: peak RSS +${((result.peakRssBytes - result.baselineRssBytes) / sessions / 1024).toFixed(1)} KiB per chat (profiler on)`,
      );
    }
  }
} finally {
  await server.child.stop();
}

const chunks = deltas - SHORT;
for (const variant of variants) {
  const short = tallies.get(`${variant}-${SHORT}`);
  const long = tallies.get(`${variant}-${deltas}`);
  if (short === undefined || long === undefined) continue;
  console.log(
    `\n## ${variant}: ${(short.total / sessions / 1024).toFixed(1)} KiB allocated per chat start (a ${SHORT}-delta turn), ` +
      `${((long.total - short.total) / sessions / chunks).toFixed(0)} bytes per further chunk`,
  );
  print(
    '\nper chat start, by the innermost library or bench frame on the stack:',
    difference(short.byOwner, sessions),
  );
  print('\nper chunk, by that frame:', difference(long.byOwner, sessions * chunks, short.byOwner));
  print('\nper chunk, by allocating frame:', difference(long.byFrame, sessions * chunks, short.byFrame));
}
console.log(`\nprofiles (open in Chrome DevTools, Memory tab): ${directory}`);
