/**
 * Memory of the dev server under many conversations: 1,000 sessions of 20 echo turns each
 * (defaults), driven over loopback HTTP with a bounded number of chats in flight. After
 * every 10% of the sessions it forces a GC and samples the heap, the `.out` records still
 * held and those written. Trims must free records: held stays near one turn per session
 * while written grows by 20 turns per session.
 *
 *   npx tsx bench/dev-server-memory.ts [--sessions 1000] [--turns 20] [--concurrency 50]
 *                                      [--trim-delay-ms 1000] [--store memory|dir]
 *
 * Needs a build (`npm run build`): it uses the package's public entries.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { classifyRecord, createOutStreamDecoder, type OutRecord } from 'durable-chat';
import { echoAgent, startDevServer } from 'durable-chat/dev-server';
import { appendUserText, createSession } from './session-setup.js';

const { values } = parseArgs({
  options: {
    sessions: { type: 'string', default: '1000' },
    turns: { type: 'string', default: '20' },
    concurrency: { type: 'string', default: '50' },
    'trim-delay-ms': { type: 'string', default: '1000' },
    store: { type: 'string', default: 'memory' },
  },
});
const SESSIONS = Number(values.sessions);
const TURNS = Number(values.turns);
const CONCURRENCY = Number(values.concurrency);

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapMiB(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1024 / 1024;
}

const dir = values.store === 'dir' ? await mkdtemp(join(tmpdir(), 'durable-chat-memory-')) : undefined;
const server = await startDevServer({
  agents: [echoAgent],
  trimDelayMs: Number(values['trim-delay-ms']),
  objectStore: dir === undefined ? 'memory' : { dir },
  // Idle runs suspend (their message memory is released) like production's checkpoints.
  idleTimeoutSeconds: 1,
});

/** Reads `.out` from `lastEventId` until the next turn-complete; returns its seq_num. */
async function readTurn(chatId: string, token: string, lastEventId: number | undefined): Promise<number> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'text/event-stream' };
  if (lastEventId !== undefined) headers['last-event-id'] = String(lastEventId);
  const abort = new AbortController();
  const response = await fetch(`${server.url}/realtime/v1/sessions/${chatId}/out`, {
    headers,
    signal: abort.signal,
  });
  if (response.body === null) throw new Error(`.out answered ${response.status}`);
  let completed: number | undefined;
  const decoder = createOutStreamDecoder((event) => {
    if (event.type !== 'batch' || completed !== undefined) return;
    for (const record of event.records as OutRecord[]) {
      const classified = classifyRecord(record);
      if (classified.kind === 'control' && classified.control === 'turn-complete') {
        completed = record.seq_num;
        break;
      }
    }
  });
  const reader = response.body.getReader();
  while (completed === undefined) {
    const { done, value } = await reader.read();
    if (done) throw new Error('.out ended before the turn-complete');
    decoder.push(value);
  }
  abort.abort();
  return completed;
}

async function runChat(index: number): Promise<void> {
  const chatId = `memory-${index}`;
  const { publicAccessToken } = await createSession(server.url, chatId, {
    secretKey: server.secretKey,
    taskIdentifier: 'echo',
  });
  let cursor: number | undefined;
  for (let turn = 0; turn < TURNS; turn++) {
    const text = `message ${turn} of chat ${index}: the quick brown fox jumps over the lazy dog`;
    await appendUserText(server.url, chatId, publicAccessToken, { id: `u${turn}`, text });
    cursor = await readTurn(chatId, publicAccessToken, cursor);
  }
}

function outRecords(): { held: number; written: number } {
  let held = 0;
  let written = 0;
  for (let index = 0; index < SESSIONS; index++) {
    const info = server.inspect(`memory-${index}`);
    if (info === undefined) continue;
    held += info.out.records;
    written += info.out.nextSeq;
  }
  return { held, written };
}

const rows: string[] = [];
const sample = (label: string) => {
  const { held, written } = outRecords();
  const row = `| ${label} | ${heapMiB().toFixed(1)} | ${held} | ${written} |`;
  rows.push(row);
  console.log(row);
};

console.log(
  `dev server memory: ${SESSIONS} sessions x ${TURNS} turns, ${CONCURRENCY} in flight, store ${values.store}`,
);
console.log('| sessions done | heap used MiB | .out records held | .out records written |');
console.log('|---:|---:|---:|---:|');
sample('0');
const started = performance.now();
let next = 0;
let done = 0;
const step = Math.max(1, Math.floor(SESSIONS / 10));
async function worker(): Promise<void> {
  while (next < SESSIONS) {
    const index = next++;
    await runChat(index);
    done += 1;
    if (done % step === 0) sample(String(done));
  }
}
await Promise.all(Array.from({ length: CONCURRENCY }, () => worker()));
const seconds = (performance.now() - started) / 1000;
// Let the last trims land, then measure what a long-lived server keeps.
await new Promise((resolve) => setTimeout(resolve, Number(values['trim-delay-ms']) + 1500));
sample('after trims + idle');
console.log(
  `${SESSIONS * TURNS} turns in ${seconds.toFixed(1)} s (${((SESSIONS * TURNS) / seconds).toFixed(0)} turns/s)`,
);
await server.close();
if (dir !== undefined) await rm(dir, { recursive: true, force: true });
