/**
 * CPU per chunk through `SessionChatTransport` against the bare decoder, on the same
 * 100,000-chunk `.out` stream, in one process. Run: `npx tsx bench/transport-cpu.ts`.
 *
 * Three readers see identical bytes, handed over in 16 KiB reads:
 * - decoder: `createOutStreamDecoder` alone (SSE parse + JSON.parse of every batch);
 * - minimal reader: the decoder plus the spec's reading rules (classify each record, which
 *   parses its body, keep the cursor, skip what is not data): what any correct client does;
 * - minimal stream: the minimal reader handing chunks to a `ReadableStream` drained by a
 *   reader: the floor of any `ChatTransport`, since the AI SDK consumes a stream;
 * - transport: `sendMessages` end to end (append, read, classify, de-duplicate, correlate,
 *   enqueue) with the returned stream drained by a reader, as the AI SDK drains it.
 * The transport's `fetch` is injected and answers from memory, so no server or socket CPU
 * is counted. Each variant runs 5 times (order rotated); medians of `process.cpuUsage`.
 * Every variant must deliver all 100,000 deltas with the same checksum or the run fails.
 *
 * Imports the public entry's source (not dist) so the figure is for the code in this tree.
 */
import type { UIMessageChunk } from 'ai';
import {
  classifyRecord,
  createOutStreamDecoder,
  dataRecord,
  encodeBatchEvent,
  type OutRecord,
  SessionChatTransport,
  turnCompleteRecord,
} from '../src/index.js';

const CHUNKS = 100_000;
const RECORDS_PER_BATCH = 20;
const READ_BYTES = 16 * 1024;
const RUNS = 5;

interface Tally {
  chunks: number;
  checksum: number;
}

function buildStream(): { reads: Uint8Array[]; expected: Tally } {
  const frames: string[] = [];
  const expected: Tally = { chunks: 0, checksum: 0 };
  let seq = 0;
  const timestamp = 1_760_000_000_000;
  let batch: OutRecord[] = [];
  const flush = () => {
    frames.push(
      encodeBatchEvent(
        { records: batch, tail: { seq_num: seq + 1, timestamp } },
        `${seq},${timestamp},${batch.length}`,
      ),
    );
    batch = [];
  };
  batch.push(dataRecord(seq, timestamp, { type: 'start', messageId: 'm1' }, 'p0'));
  batch.push(dataRecord(++seq, timestamp, { type: 'text-start', id: 't' }, 'p1'));
  for (let index = 0; index < CHUNKS; index++) {
    const delta = `w${index % 9973} `;
    batch.push(
      dataRecord(++seq, timestamp + seq, { type: 'text-delta', id: 't', delta }, `part-${seq.toString(36)}`),
    );
    expected.chunks++;
    expected.checksum = (expected.checksum + delta.length * 31 + delta.charCodeAt(1)) % 1_000_000_007;
    if (batch.length >= RECORDS_PER_BATCH) flush();
  }
  batch.push(dataRecord(++seq, timestamp, { type: 'text-end', id: 't' }, 'pe'));
  batch.push(turnCompleteRecord(++seq, timestamp, { sessionInEventId: 0 }));
  flush();
  const bytes = new TextEncoder().encode(frames.join(''));
  const reads: Uint8Array[] = [];
  for (let offset = 0; offset < bytes.length; offset += READ_BYTES)
    reads.push(bytes.subarray(offset, offset + READ_BYTES));
  return { reads, expected };
}

function countDelta(tally: Tally, delta: string): void {
  tally.chunks++;
  tally.checksum = (tally.checksum + delta.length * 31 + delta.charCodeAt(1)) % 1_000_000_007;
}

async function decoderOnly(reads: Uint8Array[]): Promise<Tally> {
  // Counts records (not deltas: the bare decoder does not parse bodies); checksum unused.
  const tally: Tally = { chunks: 0, checksum: -1 };
  const decoder = createOutStreamDecoder((event) => {
    if (event.type === 'batch') tally.chunks += event.records.length;
  });
  for (const read of reads) decoder.push(read);
  decoder.end();
  tally.chunks -= 4; // start, text-start, text-end, turn-complete
  return tally;
}

async function minimalReader(reads: Uint8Array[]): Promise<Tally> {
  const tally: Tally = { chunks: 0, checksum: 0 };
  let cursor = -1;
  const decoder = createOutStreamDecoder((event) => {
    if (event.type !== 'batch') return;
    for (const record of event.records) {
      if (record.seq_num <= cursor) continue;
      cursor = record.seq_num;
      const classified = classifyRecord(record);
      if (classified.kind === 'data' && classified.chunk.type === 'text-delta')
        countDelta(tally, classified.chunk.delta);
    }
  });
  for (const read of reads) decoder.push(read);
  decoder.end();
  return tally;
}

/**
 * The floor of any `ChatTransport`: the minimal reader, handing each chunk to a
 * `ReadableStream` (the AI SDK's contract) drained by a reader, with the same bounded queue
 * the transport uses. No cursor store, no correlation, no telemetry.
 */
async function minimalStream(reads: Uint8Array[]): Promise<Tally> {
  const tally: Tally = { chunks: 0, checksum: 0 };
  let controller: ReadableStreamDefaultController<UIMessageChunk> | undefined;
  let resume: (() => void) | undefined;
  const stream = new ReadableStream<UIMessageChunk>(
    {
      start: (c) => {
        controller = c;
      },
      pull: () => {
        resume?.();
        resume = undefined;
      },
    },
    { highWaterMark: 256, size: () => 1 },
  );
  let cursor = -1;
  const decoder = createOutStreamDecoder((event) => {
    if (event.type !== 'batch') return;
    for (const record of event.records) {
      if (record.seq_num <= cursor) continue;
      cursor = record.seq_num;
      const classified = classifyRecord(record);
      if (classified.kind === 'data') controller?.enqueue(classified.chunk);
    }
  });
  const produce = async () => {
    for (const read of reads) {
      decoder.push(read);
      if ((controller?.desiredSize ?? 1) <= 0) await new Promise<void>((resolve) => (resume = resolve));
    }
    decoder.end();
    controller?.close();
  };
  const producing = produce();
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (value.type === 'text-delta') countDelta(tally, value.delta);
  }
  await producing;
  return tally;
}

/** Answers the transport from memory: the append with `{ok, seq}`, `.out` with the reads. */
function memoryFetch(reads: Uint8Array[]): typeof fetch {
  return async (input) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (url.endsWith('/in/append')) return Response.json({ ok: true, seq: 0 });
    let index = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const read = reads[index++];
        if (read === undefined) controller.close();
        else controller.enqueue(read);
      },
    });
    return new Response(body, { headers: { 'content-type': 'text/event-stream', 'x-stream-version': 'v2' } });
  };
}

async function transport(reads: Uint8Array[]): Promise<Tally> {
  const tally: Tally = { chunks: 0, checksum: 0 };
  const session = new SessionChatTransport({
    baseURL: 'http://bench.invalid',
    taskIdentifier: 'bench',
    startSession: async () => ({ publicAccessToken: 'bench-token' }),
    fetch: memoryFetch(reads),
  });
  const stream = await session.sendMessages({
    trigger: 'submit-message',
    chatId: 'bench',
    messageId: undefined,
    messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'go' }] }],
    abortSignal: undefined,
  });
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const chunk = value as UIMessageChunk;
    if (chunk.type === 'text-delta') countDelta(tally, chunk.delta);
  }
  session.close();
  return tally;
}

async function measure(run: (reads: Uint8Array[]) => Promise<Tally>, reads: Uint8Array[]) {
  const before = process.cpuUsage();
  const tally = await run(reads);
  const used = process.cpuUsage(before);
  return { tally, cpuMicros: used.user + used.system };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? Number.NaN)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

async function main(): Promise<void> {
  const { reads, expected } = buildStream();
  const variants = {
    decoder: decoderOnly,
    'minimal reader': minimalReader,
    'minimal stream': minimalStream,
    transport,
  } as const;
  const names = Object.keys(variants) as (keyof typeof variants)[];
  const samples: Record<string, number[]> = {
    decoder: [],
    'minimal reader': [],
    'minimal stream': [],
    transport: [],
  };
  // One warm-up pass each, so the JIT has seen every path before timing.
  for (const name of names) await variants[name](reads);
  for (let run = 0; run < RUNS; run++) {
    for (let offset = 0; offset < names.length; offset++) {
      const name = names[(run + offset) % names.length] as keyof typeof variants;
      const { tally, cpuMicros } = await measure(variants[name], reads);
      const checksumOk = name === 'decoder' || tally.checksum === expected.checksum;
      if (tally.chunks !== expected.chunks || !checksumOk) {
        throw new Error(
          `${name} delivered ${tally.chunks} chunks (checksum ${tally.checksum}), expected ${expected.chunks} (${expected.checksum})`,
        );
      }
      samples[name]?.push(cpuMicros);
    }
  }
  const perChunk = (name: string) => (median(samples[name] ?? []) * 1000) / expected.chunks;
  const decoderNs = perChunk('decoder');
  const minimalNs = perChunk('minimal reader');
  const streamNs = perChunk('minimal stream');
  const transportNs = perChunk('transport');
  console.log(
    `${expected.chunks.toLocaleString('en-US')} text-delta chunks, ${RECORDS_PER_BATCH} records per batch, ${READ_BYTES / 1024} KiB reads, median of ${RUNS}`,
  );
  console.log(`decoder only     ${decoderNs.toFixed(0).padStart(6)} ns CPU/chunk`);
  console.log(`minimal reader   ${minimalNs.toFixed(0).padStart(6)} ns CPU/chunk`);
  console.log(
    `minimal stream   ${streamNs.toFixed(0).padStart(6)} ns CPU/chunk (minimal reader + ReadableStream hand-off)`,
  );
  console.log(`transport        ${transportNs.toFixed(0).padStart(6)} ns CPU/chunk`);
  console.log(`transport / decoder        ${(transportNs / decoderNs).toFixed(2)}x`);
  console.log(`transport / minimal reader ${(transportNs / minimalNs).toFixed(2)}x`);
  console.log(`transport / minimal stream ${(transportNs / streamNs).toFixed(2)}x (target <= 1.3x)`);
}

await main();
