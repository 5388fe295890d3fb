import { mkdir, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { runWorkerJob, startFixtureChild } from './child-process.js';
import { cliArgs } from './cli-args.js';
import type { VariantName } from './clients/client-variant.js';
import type { ServedTurnSpec } from './fixture-server.js';
import { heapGroups, isSteady } from './heap-groups.js';
import type { ScaleJob, ScaleResult } from './jobs/scale-job.js';

/**
 * `npm run bench:heap -- [--variant=durable-chat] [--sessions=300] [--at=2000] [--top=30]`
 * Runs the scale job (every session streams a paced turn at once) with a heap snapshot just
 * before the sends and one `--at` ms into the turn, and prints what the live heap grew by,
 * per session, grouped by constructor: where a concurrent chat's memory goes.
 */
const args = cliArgs();
const variant = (args.get('variant') ?? 'durable-chat') as VariantName;
const sessions = Number(args.get('sessions') ?? 300);
const at = Number(args.get('at') ?? 2000);
const top = Number(args.get('top') ?? 30);
/** `--by=retainer`: every node grouped with its first retainer, not only internal ones. */
const byRetainer = args.get('by') === 'retainer';
const directory = fileURLToPath(new URL('../.tmp/heap/', import.meta.url));
await rm(directory, { recursive: true, force: true });
await mkdir(directory, { recursive: true });

const turn: ServedTurnSpec = { name: 'scale', deltas: 100, batchSize: 1, intervalMs: 40 };
const server = await startFixtureChild([turn]);
let result: ScaleResult;
try {
  const job: ScaleJob = {
    kind: 'scale',
    variant,
    baseUrl: server.url,
    sessions,
    turn,
    heapSnapshot: { directory, atMs: at },
  };
  result = await runWorkerJob<ScaleResult>(job);
} finally {
  await server.child.stop();
}

const before = await heapGroups(`${directory}before.heapsnapshot`, { byRetainer });
const during = await heapGroups(`${directory}during.heapsnapshot`, { byRetainer });
const rows = [...during].map(([key, value]) => {
  const base = before.get(key) ?? { bytes: 0, count: 0 };
  return { key, bytes: (value.bytes - base.bytes) / sessions, count: (value.count - base.count) / sessions };
});
const total = rows.reduce((sum, row) => sum + row.bytes, 0);
const steady = rows.filter((row) => isSteady(row.key)).reduce((sum, row) => sum + row.bytes, 0);
const memory = result.heapSnapshot;
console.log(
  `${variant}, ${sessions} sessions, ${at} ms into the turn: live heap +${(total / 1024).toFixed(1)} KiB per session ` +
    `(without compiled code and buffer data +${(steady / 1024).toFixed(1)} KiB)` +
    (memory === undefined
      ? ''
      : `; per session at that moment: RSS +${(memory.rssBytes / sessions / 1024).toFixed(1)} KiB, ` +
        `heap used +${(memory.heapUsedBytes / sessions / 1024).toFixed(1)} KiB, ` +
        `external +${(memory.externalBytes / sessions / 1024).toFixed(1)} KiB, ` +
        `array buffers +${(memory.arrayBuffersBytes / sessions / 1024).toFixed(1)} KiB`),
);
for (const row of rows.sort((a, b) => b.bytes - a.bytes).slice(0, top)) {
  console.log(
    `${(row.bytes / 1024).toFixed(2).padStart(8)} KiB  ${row.count.toFixed(1).padStart(7)} nodes  ${row.key}`,
  );
}
