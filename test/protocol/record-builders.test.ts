import { describe, expect, it } from 'vitest';
import {
  type ClassifiedRecord,
  classifyRecord,
  commandRecord,
  controlRecord,
  dataRecord,
  legacyControlRecord,
  turnCompleteRecord,
} from '../../src/protocol/index.js';

describe('record builders write what classification reads back', () => {
  it('dataRecord', () => {
    const chunk = { type: 'start', messageId: 'msg_1' };
    const built = dataRecord(3, 30, chunk, 'p3');
    expect(built).toEqual({
      seq_num: 3,
      timestamp: 30,
      body: '{"data":{"type":"start","messageId":"msg_1"},"id":"p3"}',
      headers: [],
    });
    expect(classifyRecord(built)).toEqual({ kind: 'data', seqNum: 3, timestamp: 30, chunk, partId: 'p3' });
  });

  it('turnCompleteRecord and controlRecord', () => {
    const built = turnCompleteRecord(4, 40, { publicAccessToken: 't.o.k', sessionInEventId: 9 });
    expect(built).toEqual({
      seq_num: 4,
      timestamp: 40,
      body: '',
      headers: [
        ['trigger-control', 'turn-complete'],
        ['public-access-token', 't.o.k'],
        ['session-in-event-id', '9'],
      ],
    });
    expect(classifyRecord(built)).toMatchObject({ publicAccessToken: 't.o.k', sessionInEventId: 9 });
    expect(controlRecord(5, 50, 'upgrade-required').headers).toEqual([
      ['trigger-control', 'upgrade-required'],
    ]);
  });

  it('commandRecord defaults to trim', () => {
    expect(commandRecord(6, 60)).toEqual({ seq_num: 6, timestamp: 60, body: '', headers: [['', 'trim']] });
    expect(classifyRecord(commandRecord(6, 60, 'trim', 'x'))).toMatchObject({
      kind: 'command',
      operation: 'trim',
    });
  });

  it('legacyControlRecord', () => {
    const built = legacyControlRecord(8, 80, 'turn-complete', 'p8', 'a.b.c');
    expect(JSON.parse(built.body)).toEqual({
      data: { type: 'trigger:turn-complete', publicAccessToken: 'a.b.c' },
      id: 'p8',
    });
    const classified: ClassifiedRecord = classifyRecord(built);
    expect(classified).toMatchObject({ kind: 'control', legacy: true, publicAccessToken: 'a.b.c' });
    expect(JSON.parse(legacyControlRecord(8, 80, 'upgrade-required', 'p8').body)).toEqual({
      data: { type: 'trigger:upgrade-required' },
      id: 'p8',
    });
  });
});
