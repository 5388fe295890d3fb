import {
  batchEventId,
  commandRecord,
  controlRecord,
  createOutStreamDecoder,
  dataRecord,
  encodeBatchEvent,
  encodeDoneEvent,
  encodeErrorEvent,
  encodePingEvent,
  legacyControlRecord,
  type OutRecord,
  type OutStreamEvent,
  turnCompleteRecord,
} from '../../src/protocol/index.js';

/** An event as tests compare it: protocol errors reduced to their stable code. */
export type ComparableEvent =
  | Exclude<OutStreamEvent, { type: 'protocol-error' }>
  | { type: 'protocol-error'; code: string };

export function comparable(events: OutStreamEvent[]): ComparableEvent[] {
  return events.map((event) =>
    event.type === 'protocol-error' ? { type: 'protocol-error', code: event.error.code } : event,
  );
}

/** Feeds the pieces in order, ends the input, and returns what the decoder emitted. */
export function decodePieces(pieces: readonly (Uint8Array | string)[]): ComparableEvent[] {
  const events: OutStreamEvent[] = [];
  const decoder = createOutStreamDecoder((event) => events.push(event));
  for (const piece of pieces) decoder.push(piece);
  decoder.end();
  return comparable(events);
}

export const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

export type LineEnding = 'LF' | 'CRLF' | 'CR';

/** Rewrites LF line ends. Safe on encoder output: JSON data never holds a raw newline. */
export function withLineEnding(text: string, ending: LineEnding): string {
  if (ending === 'LF') return text;
  return text.replace(/\n/g, ending === 'CRLF' ? '\r\n' : '\r');
}

export interface Fixture {
  name: string;
  /** The stream with LF line ends. */
  text: string;
  expected: ComparableEvent[];
}

const T = 1_760_000_000_000;
const tail = (seq: number) => ({ seq_num: seq, timestamp: T + seq });

// 2-, 3- and 4-byte UTF-8, emoji with a ZWJ sequence, and a flag: all must survive splits.
const multibyte = ['é', 'ß€', '€uro', '𝄞 clef', '😀', '👩‍👩‍👧', '🇫🇷', '日本語のテキスト'];

const textRecords: OutRecord[] = multibyte.map((delta, index) =>
  dataRecord(index + 1, T + index + 1, { type: 'text-delta', id: 'txt-0', delta }, `part-${index}`),
);

const mixedRecords: OutRecord[] = [
  dataRecord(20, T + 20, { type: 'start', messageId: 'msg_é1' }, 'p20'),
  dataRecord(21, T + 21, { type: 'text-delta', id: 't', delta: 'a "quoted" \\ back\nslash' }, 'p21'),
  turnCompleteRecord(22, T + 22, { publicAccessToken: 'eyJ.token.x', sessionInEventId: 4 }),
  commandRecord(23, T + 23, 'trim', '\u0000\u0001opaque bytes'),
  controlRecord(24, T + 24, 'upgrade-required'),
  legacyControlRecord(25, T + 25, 'turn-complete', 'p25', 'eyJ.legacy.y'),
  controlRecord(26, T + 26, 'some-future-control'),
];

export const fixtures: Fixture[] = [
  {
    name: 'text deltas in multibyte UTF-8, then [DONE]',
    text:
      encodeBatchEvent({ records: textRecords, tail: tail(8) }, batchEventId(8, T + 8, 8)) +
      encodeDoneEvent(),
    expected: [{ type: 'batch', records: textRecords, tail: tail(8) }, { type: 'done' }],
  },
  {
    name: 'every record kind, pings with and without tail',
    text:
      encodePingEvent({ timestamp: T }) +
      encodeBatchEvent({ records: mixedRecords, tail: tail(26) }, batchEventId(26, T + 26, 7)) +
      encodePingEvent({ timestamp: T + 5000, tail: tail(27) }) +
      encodeDoneEvent(),
    expected: [
      { type: 'ping', timestamp: T, tail: undefined },
      { type: 'batch', records: mixedRecords, tail: tail(26) },
      { type: 'ping', timestamp: T + 5000, tail: tail(27) },
      { type: 'done' },
    ],
  },
  {
    name: 'comments, retry, unknown event names and an error event',
    text: [
      ': keepalive comment',
      'retry: 3000',
      '',
      'event: something-new',
      'data: {"ignored":true}',
      '',
      encodeBatchEvent({ records: [], tail: tail(30) }).trimEnd(),
      '',
      encodeErrorEvent('storage backend restarting\nline two é').trimEnd(),
      '',
      '',
    ].join('\n'),
    expected: [
      { type: 'batch', records: [], tail: tail(30) },
      { type: 'error', message: 'storage backend restarting\nline two é' },
    ],
  },
  {
    name: 'a batch whose JSON spans several data lines, id line first',
    text: [
      'id: 41,1760000000041,1',
      'event: batch',
      `data: {"records":[`,
      `data: ${JSON.stringify(dataRecord(41, T + 41, { type: 'text-end', id: 't' }, 'p41'))}`,
      `data: ],"tail":${JSON.stringify(tail(41))}}`,
      '',
      'data: [DONE]',
      '',
      '',
    ].join('\n'),
    expected: [
      {
        type: 'batch',
        records: [dataRecord(41, T + 41, { type: 'text-end', id: 't' }, 'p41')],
        tail: tail(41),
      },
      { type: 'done' },
    ],
  },
];
