import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  batchEventId,
  type ClassifiedRecord,
  classifyRecord,
  commandRecord,
  controlRecord,
  dataRecord,
  encodeBatchEvent,
  encodeDoneEvent,
  encodeErrorEvent,
  encodePingEvent,
  legacyControlRecord,
  type OutBatch,
  type OutPing,
  type OutRecord,
  turnCompleteRecord,
} from '../../src/protocol/index.js';
import { type ComparableEvent, decodePieces, type LineEnding, utf8, withLineEnding } from './sse-fixtures.js';

// Every code point including lone surrogates: JSON escapes them, so they must round-trip too.
const anyText = fc.string({ unit: 'binary', maxLength: 40 });
const seq = fc.nat({ max: Number.MAX_SAFE_INTEGER });
const tail = fc.record({ seq_num: seq, timestamp: fc.nat({ max: Number.MAX_SAFE_INTEGER }) });

const outRecord: fc.Arbitrary<OutRecord> = fc.record(
  {
    seq_num: seq,
    timestamp: fc.nat({ max: Number.MAX_SAFE_INTEGER }),
    body: fc.oneof(anyText, fc.json()),
    headers: fc.array(fc.tuple(anyText, anyText), { maxLength: 3 }),
  },
  { requiredKeys: ['seq_num', 'timestamp', 'body'] },
);
// A server's tail is never below the records it sends (the decoder refuses such a batch).
const batch: fc.Arbitrary<OutBatch> = fc
  .record({ records: fc.array(outRecord, { maxLength: 5 }), tail }, { requiredKeys: ['records'] })
  .map((value) =>
    value.tail === undefined
      ? value
      : {
          ...value,
          tail: {
            ...value.tail,
            seq_num: Math.max(value.tail.seq_num, ...value.records.map((record) => record.seq_num)),
          },
        },
  );
const ping: fc.Arbitrary<OutPing> = fc.record({ timestamp: fc.nat(), tail }, { requiredKeys: [] });
// The error reason is plain text; the encoder maps every line end to LF, so CR is left out here.
const errorText = fc.string({ unit: 'grapheme', maxLength: 30 }).filter((text) => !text.includes('\r'));

type Frame = { text: string; event: ComparableEvent };

const frame: fc.Arbitrary<Frame> = fc.oneof(
  fc.tuple(batch, fc.option(seq, { nil: undefined })).map(
    ([value, lastSeq]): Frame => ({
      text: encodeBatchEvent(value, lastSeq === undefined ? undefined : batchEventId(lastSeq, 1, 2)),
      event: { type: 'batch', records: value.records, tail: value.tail },
    }),
  ),
  ping.map(
    (value): Frame => ({
      text: encodePingEvent(value),
      event: { type: 'ping', timestamp: value.timestamp, tail: value.tail },
    }),
  ),
  errorText.map((message): Frame => ({ text: encodeErrorEvent(message), event: { type: 'error', message } })),
  fc.constant<Frame>({ text: encodeDoneEvent(), event: { type: 'done' } }),
);

/** Cut points, turned into pieces of the byte array. */
function split(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const offsets = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const pieces: Uint8Array[] = [];
  let start = 0;
  for (const offset of offsets) {
    pieces.push(bytes.subarray(start, offset));
    start = offset;
  }
  pieces.push(bytes.subarray(start));
  return pieces;
}

describe('encoder and decoder properties', () => {
  it('decode(encode(x)) equals x for batches, pings, errors and [DONE]', () => {
    fc.assert(
      fc.property(fc.array(frame, { maxLength: 6 }), (frames) => {
        const text = frames.map((item) => item.text).join('');
        expect(decodePieces([utf8(text)])).toEqual(frames.map((item) => item.event));
      }),
      { numRuns: 300 },
    );
  });

  it('any split into reads, any line ending, with or without BOM, decodes the same', () => {
    const endings = fc.constantFrom<LineEnding>('LF', 'CRLF', 'CR');
    fc.assert(
      fc.property(
        fc.array(frame, { minLength: 1, maxLength: 4 }),
        endings,
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 12 }),
        (frames, ending, bom, cuts) => {
          const text =
            (bom ? '\uFEFF' : '') + withLineEnding(frames.map((item) => item.text).join(''), ending);
          const expected = frames.map((item) => item.event);
          expect(decodePieces(split(utf8(text), cuts))).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });
});

type Planned =
  | { kind: 'data'; delta: string }
  | { kind: 'turn-complete'; token: string | undefined }
  | { kind: 'legacy'; token: string | undefined }
  | { kind: 'upgrade' }
  | { kind: 'trim' };

const planned: fc.Arbitrary<Planned> = fc.oneof(
  { weight: 4, arbitrary: anyText.map((delta) => ({ kind: 'data' as const, delta })) },
  fc
    .option(fc.string({ minLength: 1 }), { nil: undefined })
    .map((token) => ({ kind: 'turn-complete' as const, token })),
  fc
    .option(fc.string({ minLength: 1 }), { nil: undefined })
    .map((token) => ({ kind: 'legacy' as const, token })),
  fc.constant({ kind: 'upgrade' as const }),
  fc.constant({ kind: 'trim' as const }),
);

function toRecord(item: Planned, seqNum: number): OutRecord {
  switch (item.kind) {
    case 'data':
      return dataRecord(
        seqNum,
        seqNum * 10,
        { type: 'text-delta', id: 't', delta: item.delta },
        `p${seqNum}`,
      );
    case 'turn-complete':
      return turnCompleteRecord(seqNum, seqNum * 10, { publicAccessToken: item.token });
    case 'legacy':
      return legacyControlRecord(seqNum, seqNum * 10, 'turn-complete', `p${seqNum}`, item.token);
    case 'upgrade':
      return controlRecord(seqNum, seqNum * 10, 'upgrade-required');
    case 'trim':
      return commandRecord(seqNum, seqNum * 10, 'trim', 'opaque');
  }
}

describe('interleaved records and pings', () => {
  it('classifies every record as planned and the cursor reaches the last seq_num', () => {
    fc.assert(
      fc.property(
        fc.array(planned, { minLength: 1, maxLength: 30 }),
        fc.array(fc.nat({ max: 30 }), { maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        (plan, batchCuts, byteCuts) => {
          const records = plan.map((item, index) => toRecord(item, index + 1));
          const bounds = [
            ...new Set([0, ...batchCuts.map((cut) => cut % (records.length + 1)), records.length]),
          ];
          bounds.sort((a, b) => a - b);
          let text = encodePingEvent({ timestamp: 1 });
          for (let index = 1; index < bounds.length; index++) {
            const slice = records.slice(bounds[index - 1], bounds[index]);
            text += encodeBatchEvent({ records: slice }) + encodePingEvent({ timestamp: index });
          }
          const events = decodePieces(split(utf8(text), byteCuts));
          const classified: ClassifiedRecord[] = [];
          let cursor = 0;
          for (const event of events) {
            expect(event.type === 'batch' || event.type === 'ping').toBe(true);
            if (event.type !== 'batch') continue;
            for (const record of event.records) {
              classified.push(classifyRecord(record));
              cursor = record.seq_num;
            }
          }
          expect(cursor).toBe(records.length);
          expect(classified.map(describePlanned)).toEqual(plan);
        },
      ),
      { numRuns: 300 },
    );
  });
});

function describePlanned(record: ClassifiedRecord): Planned | string {
  if (record.kind === 'command') return { kind: 'trim' };
  if (record.kind === 'malformed') return 'malformed';
  if (record.kind === 'data') {
    return { kind: 'data', delta: (record.chunk as unknown as { delta: string }).delta };
  }
  if (record.control === 'upgrade-required') return { kind: 'upgrade' };
  return { kind: record.legacy ? 'legacy' : 'turn-complete', token: record.publicAccessToken };
}
