import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classifyRecord, type OutRecord, parseBatchData } from '../../src/protocol/index.js';

const anyText = fc.string({ unit: 'binary', maxLength: 40 });
const seq = fc.nat({ max: Number.MAX_SAFE_INTEGER });
const outRecord: fc.Arbitrary<OutRecord> = fc.record(
  {
    seq_num: seq,
    timestamp: fc.nat({ max: Number.MAX_SAFE_INTEGER }),
    body: fc.oneof(anyText, fc.json()),
    headers: fc.array(fc.tuple(fc.oneof(anyText, fc.constantFrom('', 'trigger-control')), anyText), {
      maxLength: 3,
    }),
  },
  { requiredKeys: ['seq_num', 'timestamp', 'body'] },
);

describe('classification never throws', () => {
  it('on arbitrary well-typed records', () => {
    fc.assert(
      fc.property(outRecord, (record) => {
        const classified = classifyRecord(record);
        expect(['data', 'control', 'command', 'malformed']).toContain(classified.kind);
        expect(classified.seqNum).toBe(record.seq_num);
      }),
      { numRuns: 1000 },
    );
  });

  it('on arbitrary JSON from the wire, read through parseBatchData', () => {
    const wireRecord = fc.oneof(
      fc.jsonValue(),
      fc.record({
        seq_num: fc.jsonValue(),
        timestamp: fc.jsonValue(),
        body: fc.jsonValue(),
        headers: fc.jsonValue(),
      }),
      fc.record({ seq_num: seq, timestamp: fc.jsonValue(), body: fc.jsonValue(), headers: fc.jsonValue() }),
      fc.record({
        seq_num: seq,
        body: fc.oneof(fc.json(), anyText),
        headers: fc.array(fc.tuple(fc.constantFrom('', 'trigger-control', 'public-access-token'), anyText)),
      }),
    );
    fc.assert(
      fc.property(
        fc.oneof(fc.jsonValue(), fc.record({ records: fc.array(wireRecord), tail: fc.jsonValue() })),
        (data) => {
          const result = parseBatchData(JSON.stringify(data) ?? 'null', () => {});
          for (const record of result?.records ?? []) {
            const classified = classifyRecord(record);
            expect(classified.seqNum).toBe(record.seq_num);
            expect(Number.isSafeInteger(classified.seqNum) && classified.seqNum >= 0).toBe(true);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});
