import { mkdir, readFile, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { runWorkerJob, startFixtureChild } from './child-process.js';
import { cliArgs } from './cli-args.js';
import type { VariantName } from './clients/client-variant.js';
import type { ServedTurnSpec } from './fixture-server.js';
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

interface Snapshot {
  snapshot: {
    meta: {
      node_fields: string[];
      node_types: [string[], ...unknown[]];
      edge_fields: string[];
      edge_types: [string[], ...unknown[]];
    };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
}

/**
 * Self size and count per group: objects by constructor; arrays, hidden and other internal
 * nodes by their first retainer (`(array) <- TurnStream.queue`), which says who holds them.
 */
async function groups(path: string): Promise<Map<string, { bytes: number; count: number }>> {
  const data = JSON.parse(await readFile(path, 'utf8')) as Snapshot;
  const { meta } = data.snapshot;
  const fields = meta.node_fields;
  const types = meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const edgeCountAt = fields.indexOf('edge_count');
  const edgeWidth = meta.edge_fields.length;
  const edgeTypeAt = meta.edge_fields.indexOf('type');
  const edgeNameAt = meta.edge_fields.indexOf('name_or_index');
  const edgeToAt = meta.edge_fields.indexOf('to_node');
  const edgeTypes = meta.edge_types[0];
  const count = data.nodes.length / width;
  const label = (node: number) => {
    const type = types[data.nodes[node * width + typeAt] as number] ?? '?';
    const name = data.strings[data.nodes[node * width + nameAt] as number] ?? '?';
    return type === 'object' || type === 'closure' || type === 'native'
      ? `${type}:${name.slice(0, 50)}`
      : `(${type})`;
  };
  // First retainer of every node, skipping weak edges.
  const parent = new Int32Array(count).fill(-1);
  const parentEdge: string[] = new Array(count);
  let edge = 0;
  for (let node = 0; node < count; node++) {
    const edges = data.nodes[node * width + edgeCountAt] as number;
    for (let e = 0; e < edges; e++, edge += edgeWidth) {
      const kind = edgeTypes[data.edges[edge + edgeTypeAt] as number];
      if (kind === 'weak') continue;
      const to = (data.edges[edge + edgeToAt] as number) / width;
      if (parent[to] !== -1) continue;
      parent[to] = node;
      const nameOrIndex = data.edges[edge + edgeNameAt] as number;
      parentEdge[to] =
        kind === 'element' || kind === 'hidden' ? `[${kind}]` : (data.strings[nameOrIndex] ?? '?');
    }
  }
  const out = new Map<string, { bytes: number; count: number }>();
  for (let node = 0; node < count; node++) {
    let key = label(node);
    if (byRetainer || key.startsWith('(') || key.startsWith('object:system')) {
      const owner = parent[node] as number;
      if (owner >= 0) key += ` <- ${label(owner)}.${parentEdge[node]}`;
    }
    const entry = out.get(key) ?? { bytes: 0, count: 0 };
    entry.bytes += data.nodes[node * width + sizeAt] as number;
    entry.count++;
    out.set(key, entry);
  }
  return out;
}

const before = await groups(`${directory}before.heapsnapshot`);
const during = await groups(`${directory}during.heapsnapshot`);
const rows = [...during].map(([key, value]) => {
  const base = before.get(key) ?? { bytes: 0, count: 0 };
  return { key, bytes: (value.bytes - base.bytes) / sessions, count: (value.count - base.count) / sessions };
});
const total = rows.reduce((sum, row) => sum + row.bytes, 0);
// Compiled code (what the JIT happened to optimise by then) and buffer memory (socket reads in
// flight at the snapshot) move by a KiB or more a session between runs of one build: the rest
// is the steadier figure for comparing builds.
const steady = rows
  .filter((row) => !row.key.startsWith('(code)') && !row.key.startsWith('native:'))
  .reduce((sum, row) => sum + row.bytes, 0);
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
