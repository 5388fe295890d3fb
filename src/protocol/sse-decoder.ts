import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { ProtocolError } from '../errors/protocol-error.js';
import { MAX_SSE_EVENT_CHARS } from './limits.js';
import type { OutRecord, RecordHeader, StreamTail } from './types.js';

/** What the `.out` SSE stream yields, in arrival order. */
export type OutStreamEvent =
  | { type: 'batch'; records: OutRecord[]; tail: StreamTail | undefined }
  | { type: 'ping'; timestamp: number | undefined; tail: StreamTail | undefined }
  | { type: 'done' }
  /** The server's `error` event: the connection closes without `[DONE]`; resume from the cursor. */
  | { type: 'error'; message: string }
  /** Bad data from the wire. Not fatal: what surrounds it is still delivered. */
  | { type: 'protocol-error'; error: ProtocolError };

export interface OutStreamDecoder {
  /** Feeds bytes (or text) exactly as they arrived; any split is fine. */
  push(chunk: Uint8Array | string): void;
  /** Ends the input. A trailing event with no blank line after it is dropped, as SSE requires. */
  end(): void;
}

const DONE = '[DONE]';

function isNonNegativeInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function readTail(value: unknown): StreamTail | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { seq_num, timestamp } = value as { seq_num?: unknown; timestamp?: unknown };
  if (!isNonNegativeInteger(seq_num)) return undefined;
  // Well formed (the usual case): the parsed object itself, no copy per event.
  if (typeof timestamp === 'number') return value as StreamTail;
  return { seq_num, timestamp: 0 };
}

function isHeaderList(value: unknown): value is RecordHeader[] {
  if (!Array.isArray(value)) return false;
  for (const pair of value) {
    if (!Array.isArray(pair) || typeof pair[0] !== 'string' || typeof pair[1] !== 'string') return false;
  }
  return true;
}

/**
 * Policy for bad data: a `batch` whose data is not JSON or has no `records` array is
 * reported once and skipped whole (nothing in it is readable). Inside a good batch, a
 * record without an integer `seq_num` is reported and dropped; one with a readable
 * `seq_num` but a bad body or headers is kept with an empty body, so classification marks
 * it `malformed` and the cursor still moves past it. Neighbouring records are never lost.
 */
export function parseBatchData(
  data: string,
  report: (error: ProtocolError) => void,
): { records: OutRecord[]; tail: StreamTail | undefined } | undefined {
  const batch = readBatch(data, report);
  return batch === undefined ? undefined : { records: batch.records, tail: batch.tail };
}

/** `parseBatchData`, with the highest `seq_num` kept (-1: none), found in the same pass. */
function readBatch(
  data: string,
  report: (error: ProtocolError) => void,
): { records: OutRecord[]; tail: StreamTail | undefined; highest: number } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch (cause) {
    report(new ProtocolError({ code: 'MALFORMED_BATCH', message: 'batch event data is not JSON', cause }));
    return undefined;
  }
  const raw = (parsed as { records?: unknown } | null)?.records;
  if (!Array.isArray(raw)) {
    report(new ProtocolError({ code: 'MALFORMED_BATCH', message: 'batch event has no `records` array' }));
    return undefined;
  }
  // The parsed array is returned as it is when every record is well formed (the common
  // case): a copy is made only from the first record that needs dropping or repairing.
  let records: OutRecord[] | undefined;
  let highest = -1;
  for (let index = 0; index < raw.length; index++) {
    const record = raw[index] as Partial<OutRecord> | null;
    if (typeof record !== 'object' || record === null || !isNonNegativeInteger(record.seq_num)) {
      records ??= raw.slice(0, index) as OutRecord[];
      report(
        new ProtocolError({
          code: 'MALFORMED_RECORD',
          message: `batch record ${index} has no integer seq_num`,
        }),
      );
      continue;
    }
    if (record.seq_num > highest) highest = record.seq_num;
    // `null`: a server whose serializer writes the absent list so (`classifyRecord` reads it as absent).
    const headersOk = record.headers == null || isHeaderList(record.headers);
    if (typeof record.body === 'string' && headersOk && typeof record.timestamp === 'number') {
      records?.push(record as OutRecord);
      continue;
    }
    // Kept with an unreadable body so the cursor passes it; classification reports it.
    records ??= raw.slice(0, index) as OutRecord[];
    records.push({
      seq_num: record.seq_num,
      timestamp: typeof record.timestamp === 'number' ? record.timestamp : 0,
      body: typeof record.body === 'string' && headersOk ? record.body : '',
      headers: headersOk ? (record.headers ?? undefined) : undefined,
    });
  }
  records ??= raw as OutRecord[];
  return { records, tail: readTail((parsed as { tail?: unknown }).tail), highest };
}

/**
 * The tail is the next `seq_num` the stream will write (the wire notes: caught up when
 * `highest + 1 === tail`), so no record the batch carries is past it; a tail that names the
 * last record instead is tolerated. A record past it (a `seq_num` of 2^53-1, say) would become
 * the cursor and make every later record look already seen: the whole batch is refused.
 */
function recordBeyondTail(records: OutRecord[], tail: StreamTail | undefined): OutRecord | undefined {
  if (tail === undefined) return undefined;
  for (const record of records) if (record.seq_num > tail.seq_num) return record;
  return undefined;
}

function parsePing(data: string): { timestamp: number | undefined; tail: StreamTail | undefined } {
  try {
    const parsed = JSON.parse(data) as { timestamp?: unknown; tail?: unknown } | null;
    return {
      timestamp: typeof parsed?.timestamp === 'number' ? parsed.timestamp : undefined,
      tail: readTail(parsed?.tail),
    };
  } catch {
    // The spec says pings are ignored; an unreadable one still proves the connection lives.
    return { timestamp: undefined, tail: undefined };
  }
}

/**
 * Decodes the `.out` SSE byte stream into events. Built on eventsource-parser (line
 * splitting, CRLF, BOM, multi-line data); bytes are decoded as streaming UTF-8 so a
 * character split across reads survives. The SSE `id:` line is ignored on purpose: the
 * cursor is each record's `seq_num`.
 */
export function createOutStreamDecoder(
  emit: (event: OutStreamEvent) => void,
  options: { maxEventChars?: number } = {},
): OutStreamDecoder {
  const maxEventChars = options.maxEventChars ?? MAX_SSE_EVENT_CHARS;
  const report = (error: ProtocolError) => emit({ type: 'protocol-error', error });
  // A connection that cannot be read on safely (an event past the buffer limit, a batch that
  // contradicts itself) is reported, then ended as the server's `error` event ends one: the
  // reader resumes from its cursor, which nothing in the abandoned input has moved.
  let abandoned = false;
  const abandon = (error: ProtocolError, reason: string) => {
    abandoned = true;
    report(error);
    emit({ type: 'error', message: reason });
  };
  const onEvent = (message: EventSourceMessage) => {
    if (abandoned) return;
    switch (message.event) {
      case 'batch': {
        const batch = readBatch(message.data, report);
        if (batch === undefined) return;
        // One comparison per batch; the record past the tail is looked for only when there is one.
        const beyond =
          batch.tail !== undefined && batch.highest > batch.tail.seq_num
            ? recordBeyondTail(batch.records, batch.tail)
            : undefined;
        if (beyond !== undefined) {
          abandon(
            new ProtocolError({
              code: 'MALFORMED_BATCH',
              seqNum: beyond.seq_num,
              message: `seq_num ${beyond.seq_num} is past the batch's own tail ${batch.tail?.seq_num}; batch not applied`,
            }),
            'batch contradicts its tail',
          );
          return;
        }
        emit({ type: 'batch', records: batch.records, tail: batch.tail });
        return;
      }
      case 'ping':
        emit({ type: 'ping', ...parsePing(message.data) });
        return;
      case 'error':
        emit({ type: 'error', message: message.data });
        return;
      case undefined:
      case 'message':
        if (message.data === DONE) emit({ type: 'done' });
        else
          report(
            new ProtocolError({
              code: 'UNEXPECTED_RESPONSE',
              message: 'unnamed SSE event that is not [DONE]',
            }),
          );
        return;
      default:
        // Unknown event names are tolerated for forward compatibility.
        return;
    }
  };
  const parser = createParser({
    onEvent,
    maxBufferSize: maxEventChars,
    onError: (error) => {
      if (error.type === 'max-buffer-size-exceeded') {
        abandon(
          new ProtocolError({
            code: 'EVENT_TOO_LARGE',
            message: `an SSE event passed ${maxEventChars} characters without ending; connection dropped`,
            cause: error,
          }),
          'event too large',
        );
        return;
      }
      report(
        new ProtocolError({
          code: 'UNEXPECTED_RESPONSE',
          message: `SSE syntax: ${error.message}`,
          cause: error,
        }),
      );
    },
  });
  const text = new TextDecoder('utf-8');
  // SSE ends a line at CR, LF or CRLF. The parser holds back a CR at the end of its input (it
  // may be half a CRLF), which would keep a CR-only server's last event until the next bytes, a
  // ping away, or lose it to a stall: the line is ended here, and an LF opening the next input
  // (the CRLF's other half) is dropped.
  let skipLineFeed = false;
  let atStart = true;
  const feed = (input: string) => {
    if (input === '' || abandoned) return;
    atStart = false;
    const decoded = skipLineFeed && input.charCodeAt(0) === 10 ? input.slice(1) : input;
    skipLineFeed = decoded.charCodeAt(decoded.length - 1) === 13;
    if (decoded !== '') parser.feed(skipLineFeed ? `${decoded}\n` : decoded);
  };
  return {
    push(chunk) {
      if (typeof chunk !== 'string') feed(text.decode(chunk, { stream: true }));
      // TextDecoder strips a leading BOM from bytes; text input gets the same treatment here
      // (the parser only recognises a BOM written as three Latin-1 characters).
      else feed(atStart && chunk.charCodeAt(0) === 0xfeff ? chunk.slice(1) : chunk);
    },
    end() {
      feed(text.decode());
      skipLineFeed = false;
      atStart = true;
      abandoned = false;
      parser.reset({ consume: false });
    },
  };
}
