import { describe, expect, it } from 'vitest';
import {
  batchEventId,
  commandRecord,
  DEFAULT_IDLE_TIMEOUT_SECONDS,
  DEFAULT_TIMEOUT_SECONDS,
  encodeBatchEvent,
  encodeDoneEvent,
  encodeErrorEvent,
  encodePingEvent,
  MAX_CLOSE_REASON_LENGTH,
  MAX_IDLE_TIMEOUT_SECONDS,
  MAX_MAX_ATTEMPTS,
  MAX_SESSION_TAGS,
  MAX_TIMEOUT_SECONDS,
  MIN_IDLE_TIMEOUT_SECONDS,
  MIN_MAX_ATTEMPTS,
  MIN_TIMEOUT_SECONDS,
  TOKEN_LIFETIME_SECONDS,
} from '../../src/protocol/index.js';
import { decodePieces } from './sse-fixtures.js';

describe('SSE frames on the wire', () => {
  it('writes a batch with the store-owned id line, one data line, a blank line', () => {
    const batch = { records: [commandRecord(5, 50)], tail: { seq_num: 5, timestamp: 50 } };
    expect(encodeBatchEvent(batch, batchEventId(5, 50, 1))).toBe(
      'event: batch\nid: 5,50,1\ndata: {"records":[{"seq_num":5,"timestamp":50,"body":"","headers":[["","trim"]]}],"tail":{"seq_num":5,"timestamp":50}}\n\n',
    );
    expect(encodeBatchEvent({ records: [] })).toBe('event: batch\ndata: {"records":[]}\n\n');
  });

  it('keeps a batch on one data line even when bodies hold line breaks', () => {
    const record = { seq_num: 1, timestamp: 1, body: 'a\nb\r\nc\u2028d' };
    const frame = encodeBatchEvent({ records: [record] });
    expect(frame.split('\n').filter((line) => line.startsWith('data:'))).toHaveLength(1);
    expect(frame).not.toContain('\r');
    expect(decodePieces([frame])).toEqual([{ type: 'batch', records: [record], tail: undefined }]);
  });

  it('writes ping, [DONE] and error frames', () => {
    expect(encodePingEvent({ timestamp: 9 })).toBe('event: ping\ndata: {"timestamp":9}\n\n');
    expect(encodeDoneEvent()).toBe('data: [DONE]\n\n');
    expect(encodeErrorEvent('a\r\nb\rc\nd')).toBe('event: error\ndata: a\ndata: b\ndata: c\ndata: d\n\n');
    expect(decodePieces([encodeErrorEvent('a\r\nb')])).toEqual([{ type: 'error', message: 'a\nb' }]);
  });
});

describe('limits named once, as the spec gives them', () => {
  it('matches the spec table', () => {
    expect({
      MAX_SESSION_TAGS,
      MIN_MAX_ATTEMPTS,
      MAX_MAX_ATTEMPTS,
      MIN_IDLE_TIMEOUT_SECONDS,
      MAX_IDLE_TIMEOUT_SECONDS,
      DEFAULT_IDLE_TIMEOUT_SECONDS,
      MIN_TIMEOUT_SECONDS,
      MAX_TIMEOUT_SECONDS,
      DEFAULT_TIMEOUT_SECONDS,
      MAX_CLOSE_REASON_LENGTH,
      TOKEN_LIFETIME_SECONDS,
    }).toEqual({
      MAX_SESSION_TAGS: 10,
      MIN_MAX_ATTEMPTS: 1,
      MAX_MAX_ATTEMPTS: 10,
      MIN_IDLE_TIMEOUT_SECONDS: 1,
      MAX_IDLE_TIMEOUT_SECONDS: 3600,
      DEFAULT_IDLE_TIMEOUT_SECONDS: 30,
      MIN_TIMEOUT_SECONDS: 1,
      MAX_TIMEOUT_SECONDS: 600,
      DEFAULT_TIMEOUT_SECONDS: 60,
      MAX_CLOSE_REASON_LENGTH: 256,
      TOKEN_LIFETIME_SECONDS: 3600,
    });
  });
});
