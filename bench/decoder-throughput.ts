/**
 * Throughput of the `.out` decoder on a 10 MB stream of batches, against a floor that does
 * only the unavoidable work (eventsource-parser plus JSON.parse of each batch and each record
 * body) on the same bytes in the same process. Run: `npx tsx bench/decoder-throughput.ts`.
 *
 * Imports the public entry's source (not dist) so the figure is for the code in this tree.
 */
import { createParser } from 'eventsource-parser';
import {
  batchEventId,
  classifyRecord,
  createOutStreamDecoder,
  dataRecord,
  encodeBatchEvent,
  encodeDoneEvent,
  type OutRecord,
} from '../src/index.js';

const TARGET_BYTES = 10_000_000;
const RECORDS_PER_BATCH = 100;
const CHUNK_BYTES = 64 * 1024;
const RUNS = 5;

interface Tally {
  records: number;
  deltaChars: number;
  checksum: number;
}

/** Deterministic pseudo-random ids and deltas, so every run sees the same bytes. */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state;
  };
}

function buildStream(): { bytes: Uint8Array; expected: Tally; records: OutRecord[] } {
  const next = lcg(42);
  const alphabet = 'abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ.,é';
  const word = (length: number) => Array.from({ length }, () => alphabet[next() % alphabet.length]).join('');
  const frames: string[] = [];
  const all: OutRecord[] = [];
  const expected: Tally = { records: 0, deltaChars: 0, checksum: 0 };
  let size = 0;
  let seq = 0;
  const timestamp = 1_760_000_000_000;
  while (size < TARGET_BYTES) {
    const records: OutRecord[] = [];
    for (let index = 0; index < RECORDS_PER_BATCH; index++) {
      seq++;
      const delta = word(8);
      // A fresh random part id per record, as production sends.
      records.push(dataRecord(seq, timestamp + seq, { type: 'text-delta', id: 'txt-0', delta }, word(16)));
      expected.records++;
      expected.deltaChars += delta.length;
      expected.checksum = (expected.checksum + delta.charCodeAt(3)) % 1_000_000_007;
    }
    all.push(...records);
    const frame = encodeBatchEvent(
      { records, tail: { seq_num: seq, timestamp: timestamp + seq } },
      batchEventId(seq, timestamp + seq, records.length),
    );
    frames.push(frame);
    size += Buffer.byteLength(frame);
  }
  frames.push(encodeDoneEvent());
  return { bytes: new TextEncoder().encode(frames.join('')), expected, records: all };
}

function chunksOf(bytes: Uint8Array): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  for (let offset = 0; offset < bytes.length; offset += CHUNK_BYTES) {
    chunks.push(bytes.subarray(offset, offset + CHUNK_BYTES));
  }
  return chunks;
}

function tallyDelta(tally: Tally, chunk: unknown): void {
  const delta = (chunk as { delta?: unknown }).delta;
  if (typeof delta !== 'string') throw new Error('a decoded record lost its delta');
  tally.records++;
  tally.deltaChars += delta.length;
  tally.checksum = (tally.checksum + delta.charCodeAt(3)) % 1_000_000_007;
}

/** The library path a client takes: decoder events, then classification of every record. */
function runDecoder(chunks: Uint8Array[]): Tally {
  const tally: Tally = { records: 0, deltaChars: 0, checksum: 0 };
  let done = false;
  const decoder = createOutStreamDecoder((event) => {
    if (event.type === 'batch') {
      for (const record of event.records) {
        const classified = classifyRecord(record);
        if (classified.kind !== 'data') throw new Error(`unexpected ${classified.kind} record`);
        tallyDelta(tally, classified.chunk);
      }
    } else if (event.type === 'done') done = true;
    else throw new Error(`unexpected ${event.type} event`);
  });
  for (const chunk of chunks) decoder.push(chunk);
  decoder.end();
  if (!done) throw new Error('the decoder missed [DONE]');
  return tally;
}

/** The floor: the parsing any decoder must do, with no checks and no events. */
function runFloor(chunks: Uint8Array[]): Tally {
  const tally: Tally = { records: 0, deltaChars: 0, checksum: 0 };
  const parser = createParser({
    onEvent: (message) => {
      if (message.event !== 'batch') return;
      const batch = JSON.parse(message.data) as { records: OutRecord[] };
      for (const record of batch.records)
        tallyDelta(tally, (JSON.parse(record.body) as { data: unknown }).data);
    },
  });
  const text = new TextDecoder();
  for (const chunk of chunks) parser.feed(text.decode(chunk, { stream: true }));
  parser.feed(text.decode());
  return tally;
}

function check(name: string, actual: Tally, expected: Tally): void {
  if (
    actual.records !== expected.records ||
    actual.deltaChars !== expected.deltaChars ||
    actual.checksum !== expected.checksum
  ) {
    throw new Error(`${name} decoded ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

function time(run: () => Tally): number {
  const start = performance.now();
  run();
  return performance.now() - start;
}

/** Every decoded record must equal the one encoded, field by field (not timed). */
function verifyContent(chunks: Uint8Array[], records: OutRecord[]): void {
  const decoded: OutRecord[] = [];
  const decoder = createOutStreamDecoder((event) => {
    if (event.type === 'batch') decoded.push(...event.records);
  });
  for (const chunk of chunks) decoder.push(chunk);
  decoder.end();
  if (decoded.length !== records.length)
    throw new Error(`decoded ${decoded.length} of ${records.length} records`);
  decoded.forEach((record, index) => {
    if (JSON.stringify(record) !== JSON.stringify(records[index])) {
      throw new Error(`record ${index} differs: ${JSON.stringify(record)}`);
    }
  });
}

const { bytes, expected, records } = buildStream();
const chunks = chunksOf(bytes);
// Correctness before timing (also the warm-up).
verifyContent(chunks, records);
check('decoder', runDecoder(chunks), expected);
check('floor', runFloor(chunks), expected);

const decoderTimes: number[] = [];
const floorTimes: number[] = [];
for (let run = 0; run < RUNS; run++) {
  // Alternate the order so neither side always runs on a warmer heap.
  if (run % 2 === 0) {
    decoderTimes.push(time(() => runDecoder(chunks)));
    floorTimes.push(time(() => runFloor(chunks)));
  } else {
    floorTimes.push(time(() => runFloor(chunks)));
    decoderTimes.push(time(() => runDecoder(chunks)));
  }
}

const megabytes = bytes.length / 1_000_000;
const report = (name: string, ms: number) =>
  `${name.padEnd(8)} median ${ms.toFixed(1).padStart(7)} ms  ${(megabytes / (ms / 1000)).toFixed(1).padStart(7)} MB/s  ${Math.round(expected.records / (ms / 1000)).toLocaleString('en-US')} records/s`;
const decoderMs = median(decoderTimes);
const floorMs = median(floorTimes);
console.log(
  `stream: ${megabytes.toFixed(2)} MB (10^6 bytes), ${expected.records} records in batches of ${RECORDS_PER_BATCH}, ${chunks.length} chunks of 64 KiB, ${RUNS} runs`,
);
console.log(report('decoder', decoderMs));
console.log(report('floor', floorMs));
// Each run pairs a decoder pass with a floor pass moments apart, so the paired ratio is the
// steadier figure on a machine whose load changes between runs.
const pairedRatio = median(decoderTimes.map((ms, index) => ms / (floorTimes[index] ?? Number.NaN)));
console.log(
  `ratio    decoder / floor = ${(decoderMs / floorMs).toFixed(2)}x (median of paired runs ${pairedRatio.toFixed(2)}x)`,
);
