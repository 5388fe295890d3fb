import { mkdir, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { runWorkerJob, startFixtureChild } from './child-process.js';
import { cliArgs } from './cli-args.js';
import type { VariantName } from './clients/client-variant.js';
import type { ServedTurnSpec } from './fixture-server.js';
import { growthPerSession, heapGroups, isSteady } from './heap-groups.js';
import type { ScaleJob, ScaleResult } from './jobs/scale-job.js';
import { median } from './stats.js';

/**
 * `npm run bench:heap-per-chat -- [--sessions=200] [--at=2000]
 * [--rounds=2] [--top=15] [--variant=durable-chat] [--floor=floor-overlap] [--by=retainer]`
 *
 * What each live chat holds beyond the floor. Runs the scale job (every chat streams a paced
 * turn at once) for the variant and for the floor, `rounds` times alternated, each with a heap
 * snapshot just before the sends and one `--at` ms into the turn (after a forced GC: a
 * snapshot collects garbage first), and prints the live heap's growth per chat grouped by
 * constructor, closure (with its source line) or, for internal nodes, first retainer: the
 * variant's, the floor's and the difference: the `top` largest growths, then the largest
 * savings. Sizes are self sizes (the objects' own bytes), so the rows add up to the total;
 * compiled code and buffer data are left out of the rows (they move by a KiB or more a chat
 * between runs of one build). Medians over the rounds. Two builds compared:
 * `DURABLE_CHAT_BASELINE=<the other build's dist/index.js> … --floor=durable-chat-baseline`
 * (a closure's row names its source line, so a moved line shows as one row gone, one new).
 */
const args = cliArgs();
const variant = (args.get('variant') ?? 'durable-chat') as VariantName;
const floor = (args.get('floor') ?? 'floor-overlap') as VariantName;
const sessions = Number(args.get('sessions') ?? 200);
const at = Number(args.get('at') ?? 2000);
const rounds = Number(args.get('rounds') ?? 2);
const top = Number(args.get('top') ?? 15);
const byRetainer = args.get('by') === 'retainer';
const directory = fileURLToPath(new URL('../.tmp/heap-per-chat/', import.meta.url));

const turn: ServedTurnSpec = { name: 'scale', deltas: 100, batchSize: 1, intervalMs: 40 };

type Growth = Map<string, { bytes: number; count: number }>;

async function measure(name: VariantName, url: string): Promise<Growth> {
  await rm(directory, { recursive: true, force: true });
  await mkdir(directory, { recursive: true });
  const job: ScaleJob = {
    kind: 'scale',
    variant: name,
    baseUrl: url,
    sessions,
    turn,
    heapSnapshot: { directory, atMs: at },
  };
  await runWorkerJob<ScaleResult>(job);
  const before = await heapGroups(`${directory}before.heapsnapshot`, { byRetainer });
  const during = await heapGroups(`${directory}during.heapsnapshot`, { byRetainer });
  return growthPerSession(before, during, sessions);
}

const server = await startFixtureChild([turn]);
const runs = new Map<VariantName, Growth[]>([
  [variant, []],
  [floor, []],
]);
try {
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 === 0 ? [variant, floor] : [floor, variant]) {
      const growth = await measure(name, server.url);
      runs.get(name)?.push(growth);
      const total = [...growth.values()].reduce((sum, row) => sum + row.bytes, 0);
      const steady = [...growth]
        .filter(([key]) => isSteady(key))
        .reduce((sum, [, row]) => sum + row.bytes, 0);
      console.log(
        `round ${round + 1} ${name}: +${(total / 1024).toFixed(1)} KiB a chat ` +
          `(without compiled code and buffer data +${(steady / 1024).toFixed(1)})`,
      );
    }
  }
} finally {
  await server.child.stop();
  await rm(directory, { recursive: true, force: true });
}

/** Median per key over the rounds (a key missing from a round counts as 0). */
function medians(list: Growth[]): Growth {
  const keys = new Set(list.flatMap((growth) => [...growth.keys()]));
  const out: Growth = new Map();
  for (const key of keys) {
    out.set(key, {
      bytes: median(list.map((growth) => growth.get(key)?.bytes ?? 0)),
      count: median(list.map((growth) => growth.get(key)?.count ?? 0)),
    });
  }
  return out;
}

const mine = medians(runs.get(variant) ?? []);
const theirs = medians(runs.get(floor) ?? []);
const sum = (growth: Growth, filter: (key: string) => boolean = () => true) =>
  [...growth].filter(([key]) => filter(key)).reduce((total, [, row]) => total + row.bytes, 0) / 1024;
console.log(
  `\n${variant} vs ${floor}, ${sessions} chats, ${at} ms into the turn, ${rounds} rounds (medians):` +
    ` live heap per chat ${sum(mine).toFixed(1)} vs ${sum(theirs).toFixed(1)} KiB` +
    `, without compiled code and buffer data ${sum(mine, isSteady).toFixed(1)} vs ${sum(theirs, isSteady).toFixed(1)} KiB` +
    ` (+${(sum(mine, isSteady) - sum(theirs, isSteady)).toFixed(1)})`,
);
const keys = new Set([...mine.keys(), ...theirs.keys()]);
const rows = [...keys]
  .filter(isSteady)
  .map((key) => {
    const a = mine.get(key) ?? { bytes: 0, count: 0 };
    const b = theirs.get(key) ?? { bytes: 0, count: 0 };
    return { key, a, b, bytes: a.bytes - b.bytes, count: a.count - b.count };
  })
  .sort((x, y) => y.bytes - x.bytes);
console.log(`\n| bytes a chat, ${variant} | ${floor} | difference | objects a chat, difference | group |`);
console.log('| ---: | ---: | ---: | ---: | --- |');
// The largest growths, then (below a blank row) the largest savings.
const savings = rows.filter((row) => row.bytes < 0).slice(-top);
for (const row of [...rows.slice(0, top), undefined, ...savings.reverse()]) {
  if (row === undefined) {
    console.log('| | | | | |');
    continue;
  }
  console.log(
    `| ${row.a.bytes.toFixed(0)} | ${row.b.bytes.toFixed(0)} | ${row.bytes >= 0 ? '+' : ''}${row.bytes.toFixed(0)} | ` +
      `${row.count >= 0 ? '+' : ''}${row.count.toFixed(1)} | \`${row.key.replaceAll('|', '\\|')}\` |`,
  );
}
