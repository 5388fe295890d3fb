import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors/index.js';
import {
  MAX_APPEND_BODY_BYTES,
  MAX_STORED_RECORD_BYTES,
  MIB,
  measureAppend,
  serializeAppend,
  stopChunk,
  userMessageChunk,
  utf8ByteLength,
} from '../../src/protocol/index.js';

// Independent oracle: Node's own UTF-8 length of the stored (JSON-wrapped) form.
const storedBytes = (body: string) => Buffer.byteLength(JSON.stringify(body), 'utf8');

const chunkWith = (text: string) =>
  userMessageChunk({
    chatId: 'chat-1',
    message: { id: 'm1', role: 'user', parts: [{ type: 'text', text }] },
  });

/** Fills the text so the stored record is exactly `target` bytes, with `unit` repeated and ASCII padding. */
function textForStoredSize(unit: string, target: number): string {
  const overhead = storedBytes(JSON.stringify(chunkWith('')));
  const unitBytes = storedBytes(JSON.stringify(chunkWith(unit))) - overhead;
  const count = Math.floor((target - overhead) / unitBytes);
  const padding = target - overhead - count * unitBytes;
  return unit.repeat(count) + 'a'.repeat(padding);
}

function caught(run: () => unknown): ValidationError {
  try {
    run();
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  throw new Error('expected a ValidationError');
}

describe('utf8ByteLength', () => {
  it.each([
    ['', 0],
    ['a', 1],
    ['é', 2],
    ['€', 3],
    ['😀', 4],
    ['👩‍👩‍👧', 18],
    ['\ud800', 3],
    ['\udc00x', 4],
    ['x\ud83d', 4],
  ])('%j is %i bytes', (text, bytes) => {
    expect(utf8ByteLength(text)).toBe(bytes);
  });

  it('agrees with Buffer.byteLength on any string, lone surrogates included', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        expect(utf8ByteLength(text)).toBe(Buffer.byteLength(text, 'utf8'));
      }),
      { numRuns: 1000 },
    );
  });
});

describe('measureAppend', () => {
  it('measures the body and its JSON-wrapped stored form in UTF-8 bytes', () => {
    for (const text of ['plain', 'quotes "" and \\ backslashes', 'é€😀', 'line\nbreak\ttab\u0001']) {
      const body = JSON.stringify(chunkWith(text));
      expect(measureAppend(body)).toEqual({
        bodyBytes: Buffer.byteLength(body),
        storedBytes: storedBytes(body),
      });
    }
  });
});

describe('serializeAppend: the 1 MiB ceilings', () => {
  it('uses the spec limits', () => {
    expect(MAX_APPEND_BODY_BYTES).toBe(1024 * 1024);
    expect(MAX_STORED_RECORD_BYTES).toBe(MIB);
  });

  it.each([
    ['ASCII', 'a'],
    ['2-byte', 'é'],
    ['3-byte', '€'],
    ['4-byte emoji', '😀'],
    ['quote', '"'],
    ['backslash', '\\'],
    ['control character', '\n'],
  ])('%s text: passes at exactly the stored limit, fails one byte past it', (_name, unit) => {
    const atLimit = chunkWith(textForStoredSize(unit, MAX_STORED_RECORD_BYTES));
    const body = serializeAppend(atLimit);
    expect(body).toBe(JSON.stringify(atLimit));
    expect(storedBytes(body)).toBe(MAX_STORED_RECORD_BYTES);

    const over = chunkWith(textForStoredSize(unit, MAX_STORED_RECORD_BYTES + 1));
    const error = caught(() => serializeAppend(over));
    expect(error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(error.retryable).toBe(false);
    expect(error.field).toBe('body');
    expect(error.bytes).toBe(MAX_STORED_RECORD_BYTES + 1);
    expect(error.limit).toBe(MAX_STORED_RECORD_BYTES);
  });

  it.each([
    ['quotes', '"'],
    ['backslashes', '\\'],
  ])('rejects a body of %s that passes the body check but not the stored-record check', (_name, unit) => {
    // Each character is 2 bytes in the body and 4 once wrapped again: about 0.6 MiB of body.
    const chunk = chunkWith(unit.repeat(300_000));
    const body = JSON.stringify(chunk);
    expect(Buffer.byteLength(body)).toBeLessThan(MAX_APPEND_BODY_BYTES);
    const error = caught(() => serializeAppend(chunk));
    expect(error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(error.bytes).toBe(storedBytes(body));
    expect(error.message).toContain('JSON-wrapped');
  });

  it('counts multibyte characters in bytes, not UTF-16 units', () => {
    // 200k emoji: 400k UTF-16 units (fits if miscounted) but 800k bytes; 300k emoji is 1.2 MB.
    expect(() => serializeAppend(chunkWith('😀'.repeat(200_000)))).not.toThrow();
    const error = caught(() => serializeAppend(chunkWith('😀'.repeat(300_000))));
    expect(error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(error.bytes).toBeGreaterThan(1_200_000);
  });

  it('reports the body size when the body alone is over 1 MiB', () => {
    const chunk = stopChunk('x'.repeat(MAX_APPEND_BODY_BYTES));
    const error = caught(() => serializeAppend(chunk));
    expect(error.bytes).toBe(Buffer.byteLength(JSON.stringify(chunk)));
    expect(error.message).toMatch(/^append body is \d+ bytes/);
  });
});

describe('serializeAppend: nesting', () => {
  /** A user message whose one data part holds `depth` nested arrays. */
  const nestedChunk = (depth: number) => {
    let data: unknown = [];
    for (let level = 1; level < depth; level++) data = [data];
    return userMessageChunk({
      chatId: 'chat-1',
      message: { id: 'm1', role: 'user', parts: [{ type: 'data-nested', data } as never] },
    });
  };
  /** Levels the chunk wraps around the data: chunk, payload, message, parts, part. */
  const around = 5;

  it('sends a body nested to exactly the limit, refuses one level more before sending', () => {
    expect(() => serializeAppend(nestedChunk(256 - around))).not.toThrow();
    const error = caught(() => serializeAppend(nestedChunk(256 - around + 1)));
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.field).toBe('body');
    expect(error.message).toBe('body: nests deeper than 256 levels');
  });

  it('names the depth, not a stack overflow, for a value too deep to serialise at all', () => {
    const error = caught(() => serializeAppend(nestedChunk(200_000)));
    expect(error.message).toBe('body: nests deeper than 256 levels');
  });

  it('counts only structure: brackets inside strings are text', () => {
    const body = serializeAppend(chunkWith('[{'.repeat(5_000)));
    expect(JSON.parse(body).payload.message.parts[0].text).toBe('[{'.repeat(5_000));
  });

  it('reports a cycle as a value that cannot be serialised', () => {
    const part: Record<string, unknown> = { type: 'data-cycle' };
    part.data = part;
    const chunk = userMessageChunk({
      chatId: 'chat-1',
      message: { id: 'm1', role: 'user', parts: [part as never] },
    });
    const error = caught(() => serializeAppend(chunk));
    expect(error.field).toBe('body');
    expect(error.message).toMatch(/^body: cannot be serialised as JSON \(.*circular/i);
  });
});
