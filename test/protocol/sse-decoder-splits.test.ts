import { describe, expect, it } from 'vitest';
import { createOutStreamDecoder, type OutStreamEvent } from '../../src/protocol/index.js';
import { decodePieces, fixtures, type LineEnding, utf8, withLineEnding } from './sse-fixtures.js';

const BOM = '\uFEFF';
const endings: LineEnding[] = ['LF', 'CRLF', 'CR'];

const variants = fixtures.flatMap((fixture) =>
  endings.flatMap((ending) =>
    [false, true].map((bom) => ({
      label: `${fixture.name} / ${ending}${bom ? ' / BOM' : ''}`,
      bytes: utf8((bom ? BOM : '') + withLineEnding(fixture.text, ending)),
      text: (bom ? BOM : '') + withLineEnding(fixture.text, ending),
      expected: fixture.expected,
    })),
  ),
);

describe('decoder on fixtures', () => {
  it('has fixtures with multibyte characters of every width', () => {
    const all = fixtures.map((fixture) => fixture.text).join('');
    const widths = new Set([...all].map((char) => utf8(char).length));
    expect([...widths].sort()).toEqual([1, 2, 3, 4]);
  });

  it.each(variants)('$label: whole input', ({ bytes, expected }) => {
    expect(decodePieces([bytes])).toEqual(expected);
  });

  it.each(variants)('$label: two pieces at every byte offset', ({ bytes, expected }) => {
    for (let offset = 0; offset <= bytes.length; offset++) {
      const events = decodePieces([bytes.subarray(0, offset), bytes.subarray(offset)]);
      if (JSON.stringify(events) !== JSON.stringify(expected)) {
        // Only compare in detail on a mismatch: thousands of deep equals are slow.
        expect({ offset, events }).toEqual({ offset, events: expected });
      }
    }
  });

  it.each(variants)('$label: every byte separately', ({ bytes, expected }) => {
    const pieces = Array.from(bytes, (_, index) => bytes.subarray(index, index + 1));
    expect(decodePieces(pieces)).toEqual(expected);
  });

  it.each(variants)('$label: text pushed in two pieces at every UTF-16 offset', ({ text, expected }) => {
    for (let offset = 0; offset <= text.length; offset++) {
      const events = decodePieces([text.slice(0, offset), text.slice(offset)]);
      if (JSON.stringify(events) !== JSON.stringify(expected)) {
        expect({ offset, events }).toEqual({ offset, events: expected });
      }
    }
  });

  it.each(variants)('$label: three pieces around every multibyte character', ({ bytes, expected }) => {
    // Cut inside each multibyte sequence at each inner byte, keeping the rest whole.
    for (let index = 0; index < bytes.length; index++) {
      const byte = bytes[index] ?? 0;
      if (byte < 0xc0) continue;
      const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
      for (let cut = 1; cut < length; cut++) {
        const pieces = [
          bytes.subarray(0, index + cut - 1),
          bytes.subarray(index + cut - 1, index + cut),
          bytes.subarray(index + cut),
        ];
        expect(decodePieces(pieces)).toEqual(expected);
      }
    }
  });
});

describe('decoder line endings and BOM', () => {
  it('keeps an event whose stream ends in a lone CR (held back as a possible CRLF)', () => {
    expect(decodePieces([utf8('data: [DONE]\r\r')])).toEqual([{ type: 'done' }]);
    expect(decodePieces(['data: [DONE]\r', '\r'])).toEqual([{ type: 'done' }]);
  });

  it('delivers an event that ends in a lone CR at once, not on the next read', () => {
    const events: OutStreamEvent[] = [];
    const decoder = createOutStreamDecoder((event) => events.push(event));
    decoder.push(utf8('event: ping\rdata: {"timestamp":1}\r\r'));
    expect(events).toEqual([{ type: 'ping', timestamp: 1, tail: undefined }]);
    decoder.push('data: [DONE]\r');
    decoder.push('\r');
    expect(events.at(-1)).toEqual({ type: 'done' });
    // A lone LF after a CR-ended read is that CRLF's second half, even when it comes alone.
    decoder.push('event: ping\r');
    decoder.push('\n');
    decoder.push('data: {"timestamp":2}\r\n\r\n');
    expect(events.at(-1)).toEqual({ type: 'ping', timestamp: 2, tail: undefined });
    expect(events).toHaveLength(3);
  });

  it('reads a CRLF split between two reads as one line end, not two', () => {
    // If the CR and LF counted as two line ends, the first event would be cut short.
    const events = decodePieces([
      'event: ping\r',
      '\ndata: {"timestamp":1}\r',
      '\n\r',
      '\ndata: [DONE]\r\n\r\n',
    ]);
    expect(events).toEqual([{ type: 'ping', timestamp: 1, tail: undefined }, { type: 'done' }]);
  });

  it('strips a BOM at the start of text input, even after an empty push', () => {
    expect(decodePieces(['', `${BOM}data: [DONE]\n\n`])).toEqual([{ type: 'done' }]);
    expect(decodePieces([utf8(BOM).subarray(0, 1), utf8(`${BOM}data: [DONE]\n\n`).subarray(1)])).toEqual([
      { type: 'done' },
    ]);
  });

  it('strips only a leading BOM: one in the middle is part of a line', () => {
    const events = decodePieces([`data: [DONE]\n\n${BOM}data: [DONE]\n\n`]);
    expect(events).toEqual([{ type: 'done' }, { type: 'protocol-error', code: 'UNEXPECTED_RESPONSE' }]);
  });

  it('drops a trailing event that has no blank line after it', () => {
    expect(decodePieces(['data: [DONE]\n'])).toEqual([]);
    expect(decodePieces(['data: [DONE]'])).toEqual([]);
  });

  it('can be reused after end() for a new connection', () => {
    const events: OutStreamEvent[] = [];
    const decoder = createOutStreamDecoder((event) => events.push(event));
    decoder.push(utf8('event: ping\ndata: {"timestamp":1}\r'));
    decoder.push(utf8('é').subarray(0, 1));
    decoder.end();
    decoder.push(utf8(`${BOM}data: [DONE]\n\n`));
    decoder.end();
    expect(events).toEqual([{ type: 'done' }]);
  });
});
