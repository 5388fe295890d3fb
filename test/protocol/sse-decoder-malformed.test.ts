import { describe, expect, it } from 'vitest';
import { ProtocolError } from '../../src/errors/index.js';
import {
  classifyRecord,
  createOutStreamDecoder,
  dataRecord,
  encodeBatchEvent,
  encodeDoneEvent,
  type OutStreamEvent,
  parseBatchData,
} from '../../src/protocol/index.js';
import { decodePieces } from './sse-fixtures.js';

const good = (seq: number) =>
  dataRecord(seq, 1000 + seq, { type: 'text-delta', id: 't', delta: `d${seq}` }, `p${seq}`);
const goodBatch = (seq: number) => encodeBatchEvent({ records: [good(seq)] });
const rawBatch = (data: string) => `event: batch\ndata: ${data}\n\n`;

function parse(data: unknown) {
  const errors: ProtocolError[] = [];
  const result = parseBatchData(typeof data === 'string' ? data : JSON.stringify(data), (error) =>
    errors.push(error),
  );
  return { result, errors };
}

describe('malformed batches are reported and skipped whole, neighbours survive', () => {
  it.each([
    ['not JSON', '{"records":[', 'MALFORMED_BATCH'],
    ['JSON null', 'null', 'MALFORMED_BATCH'],
    ['no records array', '{"records":{"0":{}}}', 'MALFORMED_BATCH'],
    ['a bare array', '[]', 'MALFORMED_BATCH'],
  ])('%s', (_name, data, code) => {
    const events = decodePieces([goodBatch(1), rawBatch(data), goodBatch(2), encodeDoneEvent()]);
    expect(events).toEqual([
      { type: 'batch', records: [good(1)], tail: undefined },
      { type: 'protocol-error', code },
      { type: 'batch', records: [good(2)], tail: undefined },
      { type: 'done' },
    ]);
  });

  it('reports a real ProtocolError with the parse failure as cause', () => {
    const events: OutStreamEvent[] = [];
    const decoder = createOutStreamDecoder((event) => events.push(event));
    decoder.push(rawBatch('{oops'));
    decoder.end();
    const [event] = events;
    if (event?.type !== 'protocol-error') throw new Error(`expected a protocol-error, got ${event?.type}`);
    expect(event.error).toBeInstanceOf(ProtocolError);
    expect(event.error.retryable).toBe(false);
    expect(event.error.cause).toBeInstanceOf(SyntaxError);
  });
});

describe('malformed records inside a good batch', () => {
  it('drops a record without an integer seq_num, reports it, keeps the others in order', () => {
    for (const bad of [null, 5, 'x', {}, { seq_num: -1 }, { seq_num: 1.5 }, { seq_num: '7' }]) {
      const { result, errors } = parse({
        records: [good(1), bad, good(3)],
        tail: { seq_num: 3, timestamp: 9 },
      });
      expect(result).toEqual({ records: [good(1), good(3)], tail: { seq_num: 3, timestamp: 9 } });
      expect(errors.map((error) => error.code)).toEqual(['MALFORMED_RECORD']);
      expect(errors[0]?.message).toContain('record 1');
    }
  });

  it.each([
    ['a body that is not a string', { seq_num: 2, timestamp: 5, body: { data: {} }, headers: [] }, []],
    [
      'headers that are not string pairs',
      { seq_num: 2, timestamp: 5, body: '{}', headers: [['a', 1]] },
      undefined,
    ],
    ['headers that are not an array', { seq_num: 2, timestamp: 5, body: '{}', headers: 'x' }, undefined],
    ['no body at all', { seq_num: 2, timestamp: 5 }, undefined],
  ])('keeps %s with an empty body so the cursor passes it', (_name, bad, headers) => {
    const { result, errors } = parse({ records: [good(1), bad, good(3)] });
    expect(errors).toEqual([]);
    expect(result?.records).toEqual([good(1), { seq_num: 2, timestamp: 5, body: '', headers }, good(3)]);
    const classified = classifyRecord(result?.records[1] ?? good(0));
    expect(classified).toMatchObject({ kind: 'malformed', seqNum: 2 });
    if (classified.kind === 'malformed') {
      expect(classified.error.code).toBe('MALFORMED_RECORD');
      expect(classified.error.seqNum).toBe(2);
    }
  });

  it('keeps a record with a missing timestamp as it is, with timestamp 0', () => {
    const control = { seq_num: 4, body: '', headers: [['trigger-control', 'turn-complete']] };
    const { result, errors } = parse({ records: [control] });
    expect(errors).toEqual([]);
    expect(result?.records).toEqual([{ ...control, timestamp: 0 }]);
    expect(classifyRecord(result?.records[0] ?? good(0))).toMatchObject({ kind: 'control', seqNum: 4 });
  });

  it('reads `"headers": null` (a serializer writing the absent list so) as no headers', () => {
    const data = { ...good(1), headers: null };
    const { result, errors } = parse({ records: [data] });
    expect(errors).toEqual([]);
    expect(classifyRecord(result?.records[0] ?? good(0))).toMatchObject({
      kind: 'data',
      seqNum: 1,
      chunk: { type: 'text-delta', delta: 'd1' },
    });
    // With another field unreadable too, the record is kept (its body emptied) without headers.
    const { result: bad } = parse({ records: [{ seq_num: 2, timestamp: 5, body: 7, headers: null }] });
    expect(bad?.records).toEqual([{ seq_num: 2, timestamp: 5, body: '', headers: undefined }]);
  });

  it('ignores an unreadable tail instead of failing the batch', () => {
    for (const tail of [null, 'x', { seq_num: -1 }, { seq_num: 1.5, timestamp: 1 }, { timestamp: 4 }]) {
      expect(parse({ records: [good(1)], tail }).result).toEqual({ records: [good(1)], tail: undefined });
    }
    expect(parse({ records: [], tail: { seq_num: 8 } }).result?.tail).toEqual({ seq_num: 8, timestamp: 0 });
  });
});

describe('other unexpected input', () => {
  it('reports an unnamed event that is not [DONE] and carries on', () => {
    expect(decodePieces(['data: hello\n\n', encodeDoneEvent()])).toEqual([
      { type: 'protocol-error', code: 'UNEXPECTED_RESPONSE' },
      { type: 'done' },
    ]);
    expect(decodePieces(['event: message\ndata: [DONE]\n\n'])).toEqual([{ type: 'done' }]);
  });

  it('reports an unknown SSE field and a bad retry line, then reads the event they sit in', () => {
    const text = `bogus: 1\nretry: soon\n${goodBatch(1)}`;
    expect(decodePieces([text])).toEqual([
      { type: 'protocol-error', code: 'UNEXPECTED_RESPONSE' },
      { type: 'protocol-error', code: 'UNEXPECTED_RESPONSE' },
      { type: 'batch', records: [good(1)], tail: undefined },
    ]);
  });

  it('treats an unreadable ping as a ping with nothing in it', () => {
    for (const data of ['not json', 'null', '[]', '{"timestamp":"soon","tail":{"seq_num":"1"}}']) {
      expect(decodePieces([`event: ping\ndata: ${data}\n\n`])).toEqual([
        { type: 'ping', timestamp: undefined, tail: undefined },
      ]);
    }
  });

  it('passes an error event through with an empty or multi-line reason', () => {
    expect(decodePieces(['event: error\ndata:\n\n'])).toEqual([{ type: 'error', message: '' }]);
    expect(decodePieces(['event: error\ndata: a\ndata:  b\n\n'])).toEqual([
      { type: 'error', message: 'a\n b' },
    ]);
  });

  it('replaces invalid UTF-8 instead of failing', () => {
    const bytes = new TextEncoder().encode(goodBatch(1).replace('d1', 'dX'));
    bytes[bytes.indexOf('X'.charCodeAt(0))] = 0xff;
    const events = decodePieces([bytes]);
    expect(events).toHaveLength(1);
    const [batch] = events;
    if (batch?.type !== 'batch') throw new Error('expected a batch');
    expect(classifyRecord(batch.records[0] ?? good(0))).toMatchObject({
      kind: 'data',
      chunk: { delta: 'd\uFFFD' },
    });
  });
});

describe('an event over the buffer limit', () => {
  it('is reported as EVENT_TOO_LARGE and ends the connection like an error event; end() makes the decoder usable again', () => {
    const events: OutStreamEvent[] = [];
    const decoder = createOutStreamDecoder((event) => events.push(event), { maxEventChars: 64 });
    decoder.push(goodBatch(0));
    decoder.push(`event: batch\ndata: ${'x'.repeat(40)}`);
    decoder.push('y'.repeat(40));
    decoder.push(goodBatch(1));
    expect(events.map((event) => event.type)).toEqual(['batch', 'protocol-error', 'error']);
    const reported = events[1];
    expect(reported?.type === 'protocol-error' && reported.error.code).toBe('EVENT_TOO_LARGE');
    decoder.end();
    decoder.push(goodBatch(2));
    expect(events.at(-1)).toMatchObject({ type: 'batch', records: [{ seq_num: 2 }] });
  });
});

describe('a batch that contradicts its own tail', () => {
  it('is refused whole (MALFORMED_BATCH with the seq_num) and ends the connection; records below the tail pass', () => {
    const events: OutStreamEvent[] = [];
    const decoder = createOutStreamDecoder((event) => events.push(event));
    decoder.push(encodeBatchEvent({ records: [good(0), good(1)], tail: { seq_num: 2, timestamp: 0 } }));
    decoder.push(
      encodeBatchEvent({
        records: [good(2), good(Number.MAX_SAFE_INTEGER)],
        tail: { seq_num: 3, timestamp: 0 },
      }),
    );
    decoder.push(goodBatch(3));
    expect(events.map((event) => event.type)).toEqual(['batch', 'protocol-error', 'error']);
    expect(events[1]).toMatchObject({ error: { code: 'MALFORMED_BATCH', seqNum: Number.MAX_SAFE_INTEGER } });
  });
});
