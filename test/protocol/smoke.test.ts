import { describe, expect, it } from 'vitest';
import {
  classifyRecord,
  createOutStreamDecoder,
  dataRecord,
  encodeBatchEvent,
  encodeDoneEvent,
  type OutStreamEvent,
  turnCompleteRecord,
} from '../../src/protocol/index.js';

describe('decoder smoke', () => {
  it('reads a batch and [DONE]', () => {
    const events: OutStreamEvent[] = [];
    const decoder = createOutStreamDecoder((event) => events.push(event));
    const records = [
      dataRecord(1, 10, { type: 'text-delta', id: 't', delta: 'hi' }, 'p1'),
      turnCompleteRecord(2, 11),
    ];
    decoder.push(
      new TextEncoder().encode(encodeBatchEvent({ records, tail: { seq_num: 2, timestamp: 11 } }, '2,11,2')),
    );
    decoder.push(encodeDoneEvent());
    decoder.end();
    expect(events).toEqual([
      { type: 'batch', records, tail: { seq_num: 2, timestamp: 11 } },
      { type: 'done' },
    ]);
    expect(classifyRecord(records[0] as (typeof records)[0]).kind).toBe('data');
    expect(classifyRecord(records[1] as (typeof records)[0]).kind).toBe('control');
  });
});
