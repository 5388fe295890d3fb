/**
 * What keeping sessions in a data folder costs the dev server, memory vs `dataDir`:
 *
 * - append latency: `--appends` user messages appended one after another (each answered
 *   only once it is durable), the agent answering each with a short reply; median and p95
 *   of the POST's round trip;
 * - chunk throughput: an agent writes `--records` text deltas as fast as it can, one SSE
 *   reader takes them all (each record is served only once it is durable); records/s.
 *
 *   npx tsx bench/dev-server-durability.ts [--appends 300] [--records 50000] [--runs 3] [--dir /tmp/x]
 *
 * `--dir` picks the disk measured (default: the OS temporary folder). Needs a build
 * (`npm run build`): it uses the package's public entries.
 */
import { mkdtemp, open, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { UIMessageChunk } from 'ai';
import { classifyRecord, createOutStreamDecoder } from 'durable-chat';
import { type DevServer, defineAgent, startDevServer } from 'durable-chat/dev-server';
import { appendUserText, createSession } from './session-setup.js';
import { median, rotate } from './stats.js';

const { values } = parseArgs({
  options: {
    appends: { type: 'string', default: '300' },
    records: { type: 'string', default: '50000' },
    runs: { type: 'string', default: '3' },
    dir: { type: 'string' },
  },
});
const APPENDS = Number(values.appends);
const RECORDS = Number(values.records);
const RUNS = Number(values.runs);

const short = defineAgent({
  id: 'short',
  run() {
    return (async function* (): AsyncGenerator<UIMessageChunk> {
      yield { type: 'start' };
      yield { type: 'text-start', id: 't' };
      yield { type: 'text-delta', id: 't', delta: 'ok' };
      yield { type: 'text-end', id: 't' };
      yield { type: 'finish' };
    })();
  },
});

const firehose = defineAgent({
  id: 'firehose',
  run() {
    return (async function* (): AsyncGenerator<UIMessageChunk> {
      yield { type: 'start' };
      yield { type: 'text-start', id: 't' };
      for (let index = 0; index < RECORDS; index++)
        yield { type: 'text-delta', id: 't', delta: 'x'.repeat(16) };
      yield { type: 'text-end', id: 't' };
      yield { type: 'finish' };
    })();
  },
});

function percentile(samples: number[], fraction: number): number {
  const sorted = [...samples].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
}

async function appendLatencies(server: DevServer, chatId: string): Promise<number[]> {
  const { publicAccessToken } = await createSession(server.url, chatId, {
    secretKey: server.secretKey,
    taskIdentifier: 'short',
  });
  const samples: number[] = [];
  for (let index = 0; index < APPENDS; index++) {
    const started = performance.now();
    await appendUserText(server.url, chatId, publicAccessToken, {
      id: `u${index}`,
      text: `message ${index}`,
    });
    samples.push(performance.now() - started);
  }
  return samples;
}

async function throughput(server: DevServer, chatId: string): Promise<number> {
  const { publicAccessToken } = await createSession(server.url, chatId, {
    secretKey: server.secretKey,
    taskIdentifier: 'firehose',
  });
  const response = await fetch(`${server.url}/realtime/v1/sessions/${chatId}/out`, {
    headers: {
      authorization: `Bearer ${publicAccessToken}`,
      accept: 'text/event-stream',
      'timeout-seconds': '600',
    },
  });
  const reader = response.body?.getReader();
  if (reader === undefined) throw new Error(`.out answered ${response.status}`);
  let expected = 0;
  let complete = false;
  const decoder = createOutStreamDecoder((event) => {
    if (event.type !== 'batch') return;
    for (const record of event.records) {
      if (record.seq_num !== expected) throw new Error(`gap: expected ${expected}, got ${record.seq_num}`);
      expected += 1;
      const classified = classifyRecord(record);
      if (classified.kind === 'control' && classified.control === 'turn-complete') complete = true;
    }
  });
  const started = performance.now();
  await appendUserText(server.url, chatId, publicAccessToken, { id: 'u', text: 'go' });
  while (!complete) {
    const { done, value } = await reader.read();
    if (done) throw new Error('.out ended early');
    decoder.push(value);
  }
  const seconds = (performance.now() - started) / 1000;
  await reader.cancel();
  return expected / seconds;
}

/** The disk's floor: one small append + `fdatasync`, as the journal does per batch. */
async function syncLatencies(dir: string, count: number): Promise<number[]> {
  const handle = await open(join(dir, 'sync-probe.log'), 'a');
  const samples: number[] = [];
  try {
    for (let index = 0; index < count; index++) {
      const started = performance.now();
      await handle.write(`{"probe":${index}}\n`);
      await handle.datasync();
      samples.push(performance.now() - started);
    }
  } finally {
    await handle.close();
  }
  return samples;
}

type Mode = 'memory' | 'dataDir';
const base = await mkdtemp(join(values.dir ?? tmpdir(), 'durable-chat-bench-'));
const latencies: Record<Mode, number[]> = { memory: [], dataDir: [] };
const rates: Record<Mode, number[]> = { memory: [], dataDir: [] };
let syncs: number[] = [];
try {
  syncs = await syncLatencies(base, 200);
  // Both modes in every run, in alternating order: a shared machine's load hits both alike.
  for (let run = 0; run < RUNS; run++) {
    for (const mode of rotate<Mode>(['memory', 'dataDir'], run)) {
      const server = await startDevServer({
        agents: [short, firehose],
        trimDelayMs: 60_000,
        logger: { warn: () => {} },
        ...(mode === 'dataDir' ? { dataDir: join(base, `run-${run}`) } : {}),
      });
      try {
        latencies[mode].push(...(await appendLatencies(server, `latency-${run}`)));
        rates[mode].push(await throughput(server, `throughput-${run}`));
      } finally {
        await server.close();
      }
    }
  }
} finally {
  await rm(base, { recursive: true, force: true });
}
console.log(
  `dev server, memory vs data folder (${base.slice(0, base.lastIndexOf('/'))}): ${RUNS} runs of ${APPENDS} sequential appends and ${RECORDS} streamed records; load average ${loadavg()[0]?.toFixed(1)}`,
);
console.log(
  `disk floor: append + fdatasync median ${median(syncs).toFixed(2)} ms, p95 ${percentile(syncs, 0.95).toFixed(2)} ms`,
);
console.log(
  '| storage | append median ms | append p95 ms | records/s (median of runs) | records/s per run |',
);
console.log('|---|---:|---:|---:|---|');
for (const mode of ['memory', 'dataDir'] as const) {
  console.log(
    `| ${mode} | ${median(latencies[mode]).toFixed(2)} | ${percentile(latencies[mode], 0.95).toFixed(2)} | ${Math.round(median(rates[mode]))} | ${rates[mode].map(Math.round).join(', ')} |`,
  );
}
