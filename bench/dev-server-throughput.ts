/**
 * Records per second through one `.out` subscription on loopback: an agent writes
 * `--records` text deltas as fast as it can; one SSE reader decodes every batch and checks
 * that `seq_num`s arrive gapless. Reported: records/s and MiB/s end to end, plus the
 * batch sizes the server's coalescing produced.
 *
 *   npx tsx bench/dev-server-throughput.ts [--records 200000] [--delta-bytes 16] [--runs 3]
 *
 * Needs a build (`npm run build`): it uses the package's public entries.
 */
import { parseArgs } from 'node:util';
import type { UIMessageChunk } from 'ai';
import { classifyRecord, createOutStreamDecoder } from 'durable-chat';
import { defineAgent, startDevServer } from 'durable-chat/dev-server';
import { appendUserText, createSession } from './session-setup.js';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '200000' },
    'delta-bytes': { type: 'string', default: '16' },
    runs: { type: 'string', default: '3' },
  },
});
const RECORDS = Number(values.records);
const DELTA = 'x'.repeat(Number(values['delta-bytes']));

const firehose = defineAgent({
  id: 'firehose',
  run() {
    return (async function* (): AsyncGenerator<UIMessageChunk> {
      yield { type: 'start' };
      yield { type: 'text-start', id: 't' };
      for (let index = 0; index < RECORDS; index++) yield { type: 'text-delta', id: 't', delta: DELTA };
      yield { type: 'text-end', id: 't' };
      yield { type: 'finish' };
    })();
  },
});

const server = await startDevServer({ agents: [firehose], trimDelayMs: 60_000 });

async function run(
  index: number,
): Promise<{ seconds: number; records: number; bytes: number; batches: number }> {
  const chatId = `throughput-${index}`;
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
  let records = 0;
  let batches = 0;
  let bytes = 0;
  let complete = false;
  const decoder = createOutStreamDecoder((event) => {
    if (event.type !== 'batch') return;
    batches += 1;
    for (const record of event.records) {
      if (record.seq_num !== expected) throw new Error(`gap: expected ${expected}, got ${record.seq_num}`);
      expected += 1;
      records += 1;
      const classified = classifyRecord(record);
      if (classified.kind === 'control' && classified.control === 'turn-complete') complete = true;
    }
  });
  const started = performance.now();
  await appendUserText(server.url, chatId, publicAccessToken, { id: 'u', text: 'go' });
  while (!complete) {
    const { done, value } = await reader.read();
    if (done) throw new Error('.out ended early');
    bytes += value.byteLength;
    decoder.push(value);
  }
  const seconds = (performance.now() - started) / 1000;
  await reader.cancel();
  return { seconds, records, bytes, batches };
}

console.log(
  `dev server .out throughput: ${RECORDS} text-delta records of ${DELTA.length} characters, one subscriber`,
);
console.log('| run | records | seconds | records/s | MiB/s | batches | records/batch |');
console.log('|---:|---:|---:|---:|---:|---:|---:|');
for (let index = 0; index < Number(values.runs); index++) {
  const result = await run(index);
  console.log(
    `| ${index + 1} | ${result.records} | ${result.seconds.toFixed(2)} | ${Math.round(result.records / result.seconds)} | ${(result.bytes / 1024 / 1024 / result.seconds).toFixed(1)} | ${result.batches} | ${(result.records / result.batches).toFixed(0)} |`,
  );
}
await server.close();
