import { describe, expect, it } from 'vitest';
import {
  classifyRecord,
  isTurnComplete,
  isUpgradeRequired,
  type OutRecord,
} from '../../src/protocol/index.js';

const record = (fields: Partial<OutRecord>): OutRecord => ({
  seq_num: 7,
  timestamp: 70,
  body: '',
  ...fields,
});
const dataBody = (data: unknown, id?: unknown) => JSON.stringify(id === undefined ? { data } : { data, id });

describe('rule 2: first header name empty is a command record', () => {
  it('skips a trim with an opaque body, keeping seq_num and timestamp for the cursor', () => {
    const result = classifyRecord(record({ body: '\u0000\uFFFDnot json', headers: [['', 'trim']] }));
    expect(result).toEqual({ kind: 'command', seqNum: 7, timestamp: 70, operation: 'trim' });
  });

  it('wins over a trigger-control header that follows it', () => {
    const result = classifyRecord(
      record({
        headers: [
          ['', 'future-op'],
          ['trigger-control', 'turn-complete'],
        ],
      }),
    );
    expect(result).toEqual({ kind: 'command', seqNum: 7, timestamp: 70, operation: 'future-op' });
  });

  it('applies only to the first header: an empty name later does not make a command', () => {
    const result = classifyRecord(
      record({
        body: dataBody({ type: 'text-delta', delta: 'x' }, 'p'),
        headers: [
          ['x-other', 'v'],
          ['', 'trim'],
        ],
      }),
    );
    expect(result.kind).toBe('data');
  });
});

describe('rule 3: a trigger-control header is a control record', () => {
  it('reads turn-complete with a refreshed token and the .in cursor, ignoring the body', () => {
    const result = classifyRecord(
      record({
        body: 'not even json',
        headers: [
          ['trigger-control', 'turn-complete'],
          ['public-access-token', 'tok.en.value'],
          ['session-in-event-id', '17'],
        ],
      }),
    );
    expect(result).toEqual({
      kind: 'control',
      seqNum: 7,
      timestamp: 70,
      control: 'turn-complete',
      publicAccessToken: 'tok.en.value',
      sessionInEventId: 17,
      legacy: false,
    });
    expect(isTurnComplete(result)).toBe(true);
    expect(isUpgradeRequired(result)).toBe(false);
  });

  it('reads turn-complete without the optional headers (an errored turn)', () => {
    const result = classifyRecord(record({ headers: [['trigger-control', 'turn-complete']] }));
    expect(result).toMatchObject({
      control: 'turn-complete',
      publicAccessToken: undefined,
      sessionInEventId: undefined,
    });
  });

  it('finds the control header anywhere in the list, in any letter case', () => {
    const result = classifyRecord(
      record({
        headers: [
          ['Public-Access-Token', 'abc'],
          ['Trigger-Control', 'turn-complete'],
          ['Session-In-Event-Id', '0'],
        ],
      }),
    );
    expect(result).toMatchObject({ kind: 'control', publicAccessToken: 'abc', sessionInEventId: 0 });
  });

  it.each(['', '-1', '1.5', '17a', ' 3', '0x10'])('ignores a session-in-event-id of %j', (value) => {
    const result = classifyRecord(
      record({
        headers: [
          ['trigger-control', 'turn-complete'],
          ['session-in-event-id', value],
        ],
      }),
    );
    expect(result).toMatchObject({ kind: 'control', sessionInEventId: undefined });
  });

  it('treats an empty public-access-token as absent', () => {
    const result = classifyRecord(
      record({
        headers: [
          ['trigger-control', 'turn-complete'],
          ['public-access-token', ''],
        ],
      }),
    );
    expect(result).toMatchObject({ publicAccessToken: undefined });
  });

  it('reads upgrade-required', () => {
    const result = classifyRecord(record({ headers: [['trigger-control', 'upgrade-required']] }));
    expect(result).toMatchObject({ kind: 'control', control: 'upgrade-required', legacy: false });
    expect(isUpgradeRequired(result)).toBe(true);
    expect(isTurnComplete(result)).toBe(false);
  });

  it('tolerates an unknown subtype: a control record, never malformed or fatal', () => {
    const result = classifyRecord(record({ headers: [['trigger-control', 'session-paused']] }));
    expect(result).toMatchObject({ kind: 'control', control: 'session-paused' });
    expect(isTurnComplete(result) || isUpgradeRequired(result)).toBe(false);
  });
});

describe('rule 4: otherwise a data record with a {data, id} body', () => {
  it('dispatches the chunk with its part id, with or without an empty header list', () => {
    const chunk = { type: 'text-delta', id: 'txt', delta: 'héllo 😀' };
    for (const headers of [undefined, []]) {
      expect(classifyRecord(record({ body: dataBody(chunk, 'part-1'), headers }))).toEqual({
        kind: 'data',
        seqNum: 7,
        timestamp: 70,
        chunk,
        partId: 'part-1',
      });
    }
  });

  it('keeps a chunk of an unknown type, and an unrelated header does not change the kind', () => {
    const chunk = { type: 'data-subagent', transient: true, data: { toolCallId: 'c', seq: 0, chunks: [] } };
    const result = classifyRecord(record({ body: dataBody(chunk, 'p'), headers: [['x-extra', '1']] }));
    expect(result).toMatchObject({ kind: 'data', chunk });
  });

  it('has no part id when the body has none or a non-string one', () => {
    expect(classifyRecord(record({ body: dataBody({ type: 'finish' }) }))).toMatchObject({
      partId: undefined,
    });
    expect(classifyRecord(record({ body: dataBody({ type: 'finish' }, 5) }))).toMatchObject({
      partId: undefined,
    });
  });

  it.each([
    ['not JSON', '{"data":'],
    ['empty (a control record that lost its header)', ''],
    ['JSON null', 'null'],
    ['a JSON string', '"text"'],
    ['an array', '[{"type":"finish"}]'],
    ['no data', '{"id":"p"}'],
    ['data that is not an object', '{"data":"finish","id":"p"}'],
    ['data without a type', '{"data":{"delta":"x"},"id":"p"}'],
    ['data with a non-string type', '{"data":{"type":5},"id":"p"}'],
  ])('marks a body that is %s as malformed, keeping seq_num', (_name, body) => {
    const result = classifyRecord(record({ body }));
    expect(result.kind).toBe('malformed');
    if (result.kind !== 'malformed') return;
    expect(result.seqNum).toBe(7);
    expect(result.timestamp).toBe(70);
    expect(result.error.code).toBe('MALFORMED_RECORD');
    expect(result.error.seqNum).toBe(7);
    expect(result.error.message).toContain('record 7');
  });
});

describe('legacy control chunks (data records of type trigger:*)', () => {
  it('reads trigger:turn-complete with the token inside the chunk', () => {
    const result = classifyRecord(
      record({ body: dataBody({ type: 'trigger:turn-complete', publicAccessToken: 'legacy.jwt.x' }, 'p') }),
    );
    expect(result).toEqual({
      kind: 'control',
      seqNum: 7,
      timestamp: 70,
      control: 'turn-complete',
      publicAccessToken: 'legacy.jwt.x',
      sessionInEventId: undefined,
      legacy: true,
    });
    expect(isTurnComplete(result)).toBe(true);
  });

  it('reads trigger:upgrade-required', () => {
    const result = classifyRecord(record({ body: dataBody({ type: 'trigger:upgrade-required' }, 'p') }));
    expect(result).toMatchObject({ kind: 'control', control: 'upgrade-required', legacy: true });
    expect(isUpgradeRequired(result)).toBe(true);
  });

  it.each([[''], [42], [null]])('ignores a token of %j', (token) => {
    const result = classifyRecord(
      record({ body: dataBody({ type: 'trigger:turn-complete', publicAccessToken: token }) }),
    );
    expect(result).toMatchObject({ kind: 'control', publicAccessToken: undefined });
  });

  it('does not take a non-trigger chunk type for a control', () => {
    expect(classifyRecord(record({ body: dataBody({ type: 'turn-complete' }, 'p') })).kind).toBe('data');
    expect(classifyRecord(record({ body: dataBody({ type: 'data-trigger:x' }, 'p') })).kind).toBe('data');
  });
});
