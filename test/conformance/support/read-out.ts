import { assert } from 'vitest';
import type { ProtocolError } from '../../../src/errors/index.js';
import {
  type ClassifiedRecord,
  classifyRecord,
  createOutStreamDecoder,
  EVENT_STREAM,
  HEADER,
  type OutRecord,
  type OutStreamEvent,
} from '../../../src/protocol/index.js';

export interface ReadOutOptions {
  baseURL: string;
  /** The `session_*` id or the `externalId`. */
  session: string;
  token: string | null;
  lastEventId?: string | number;
  timeoutSeconds?: string | number;
  peek?: boolean;
  /** Stop reading (and drop the connection) as soon as this returns true. */
  until?: (read: OutRead) => boolean;
  /** Drop the connection after this long; the read then ends with `max-time`. Default 15 s. */
  maxMs?: number;
}

export interface OutRead {
  status: number;
  headers: Headers;
  events: OutStreamEvent[];
  /** Every record of every batch, raw and classified, in arrival order. */
  raw: OutRecord[];
  records: ClassifiedRecord[];
  protocolErrors: ProtocolError[];
  /** `[DONE]` arrived. */
  done: boolean;
  /** `dropped`: the connection broke after the response started (see `dropError`). */
  ending: 'server-closed' | 'dropped' | 'until' | 'max-time' | 'refused';
  dropError: unknown;
  /** The body of a refused (non-SSE) answer. */
  refusalText: string;
  elapsedMs: number;
}

/**
 * Reads `.out` over real HTTP through the protocol's own decoder and classifier, so the
 * suite judges the wire exactly as a client would. Never retries or resumes.
 */
export async function readOut(options: ReadOutOptions): Promise<OutRead> {
  const headers: Record<string, string> = { [HEADER.accept]: EVENT_STREAM };
  if (options.token !== null) headers[HEADER.authorization] = `Bearer ${options.token}`;
  if (options.lastEventId !== undefined) headers[HEADER.lastEventId] = String(options.lastEventId);
  if (options.timeoutSeconds !== undefined) headers[HEADER.timeoutSeconds] = String(options.timeoutSeconds);
  if (options.peek === true) headers[HEADER.peekSettled] = '1';

  const controller = new AbortController();
  const started = performance.now();
  let ending: OutRead['ending'] = 'server-closed';
  const timer = setTimeout(() => {
    ending = 'max-time';
    controller.abort();
  }, options.maxMs ?? 15_000);

  const url = `${options.baseURL}/realtime/v1/sessions/${encodeURIComponent(options.session)}/out`;
  const read: OutRead = {
    status: 0,
    headers: new Headers(),
    events: [],
    raw: [],
    records: [],
    protocolErrors: [],
    done: false,
    ending,
    refusalText: '',
    elapsedMs: 0,
    dropError: undefined,
  };
  let satisfied = false;
  const decoder = createOutStreamDecoder((event) => {
    read.events.push(event);
    if (event.type === 'batch') {
      for (const record of event.records) {
        read.raw.push(record);
        read.records.push(classifyRecord(record));
      }
    } else if (event.type === 'done') read.done = true;
    else if (event.type === 'protocol-error') read.protocolErrors.push(event.error);
    if (!satisfied && options.until?.(read) === true) satisfied = true;
  });

  try {
    const response = await fetch(url, { headers, signal: controller.signal });
    read.status = response.status;
    read.headers = response.headers;
    const contentType = response.headers.get(HEADER.contentType) ?? '';
    if (!response.ok || !contentType.includes(EVENT_STREAM) || response.body === null) {
      read.refusalText = await response.text();
      ending = 'refused';
    } else {
      const reader = response.body.getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) {
          decoder.end();
          break;
        }
        decoder.push(value);
        if (satisfied) {
          ending = 'until';
          controller.abort();
          break;
        }
      }
    }
  } catch (error) {
    if (!controller.signal.aborted) {
      // A connection cut after the headers is a wire outcome the cases judge; before them it is a failure.
      if (read.status === 0) throw error;
      ending = 'dropped';
      read.dropError = error;
    } else if (read.status === 0) {
      assert.fail(`no response headers from ${redact(url)} within ${options.maxMs} ms`);
    }
  } finally {
    clearTimeout(timer);
  }
  read.ending = ending;
  read.elapsedMs = performance.now() - started;
  return read;
}

function redact(url: string): string {
  return url.replace(/\?.*$/, '');
}

/** `seq_num`s of what was read, in arrival order. */
export function seqNums(read: OutRead): number[] {
  return read.records.map((record) => record.seqNum);
}
