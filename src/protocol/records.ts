import type { UIMessageChunk } from 'ai';
import { ProtocolError } from '../errors/protocol-error.js';
import { CONTROL, LEGACY_CONTROL_PREFIX, RECORD_HEADER } from './headers.js';
import { jsonTextTooDeep, MAX_JSON_DEPTH } from './json-depth.js';
import type { OutRecord } from './types.js';

export type ControlName = 'turn-complete' | 'upgrade-required' | (string & {});

/** A UIMessageChunk for the AI SDK reducer, with the record's part id. */
export interface DataRecord<CHUNK = UIMessageChunk> {
  kind: 'data';
  seqNum: number;
  timestamp: number;
  chunk: CHUNK;
  partId: string | undefined;
}

/** `turn-complete`, `upgrade-required`, or a subtype this version does not know (tolerated). */
export interface ControlRecord {
  kind: 'control';
  seqNum: number;
  timestamp: number;
  control: ControlName;
  /** Refreshed session token, when the record carries one. */
  publicAccessToken: string | undefined;
  /** `.in` sequence number the agent had consumed when the turn finished. */
  sessionInEventId: number | undefined;
  /** True for the old data-record form (`trigger:turn-complete`). */
  legacy: boolean;
}

/** Stream-store command (`trim`): skipped, but the cursor still advances. */
export interface CommandRecord {
  kind: 'command';
  seqNum: number;
  timestamp: number;
  operation: string;
}

/** A record with a readable `seq_num` but an unreadable body: the cursor advances past it. */
export interface MalformedRecord {
  kind: 'malformed';
  seqNum: number;
  timestamp: number;
  error: ProtocolError;
}

export type ClassifiedRecord<CHUNK = UIMessageChunk> =
  | DataRecord<CHUNK>
  | ControlRecord
  | CommandRecord
  | MalformedRecord;

function malformed(record: OutRecord, reason: string, cause?: unknown): MalformedRecord {
  return {
    kind: 'malformed',
    seqNum: record.seq_num,
    timestamp: record.timestamp,
    error: new ProtocolError({
      code: 'MALFORMED_RECORD',
      message: `record ${record.seq_num}: ${reason}`,
      seqNum: record.seq_num,
      cause,
    }),
  };
}

function parseSeq(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d+$/.test(value)) return undefined;
  return Number(value);
}

function classifyControl(
  record: OutRecord,
  headers: readonly (readonly [string, string])[],
  control: string,
) {
  let publicAccessToken: string | undefined;
  let sessionInEventId: number | undefined;
  for (const [name, value] of headers) {
    const lower = name.toLowerCase();
    if (lower === RECORD_HEADER.publicAccessToken && value !== '') publicAccessToken = value;
    else if (lower === RECORD_HEADER.sessionInEventId) sessionInEventId = parseSeq(value);
  }
  const result: ControlRecord = {
    kind: 'control',
    seqNum: record.seq_num,
    timestamp: record.timestamp,
    control,
    publicAccessToken,
    sessionInEventId,
    legacy: false,
  };
  return result;
}

/**
 * Classifies one `.out` record by the spec's reading rules, in order: a first header with
 * an empty name is a command; a `trigger-control` header makes a control record; anything
 * else is a data record whose body is `{data, id}`. Data chunks of type `trigger:*` are
 * the legacy control form. Never throws: an unreadable body is a `malformed` record.
 */
export function classifyRecord<CHUNK = UIMessageChunk>(record: OutRecord): ClassifiedRecord<CHUNK> {
  const headers = record.headers;
  if (headers != null && headers.length > 0) {
    const first = headers[0];
    if (first !== undefined && first[0] === RECORD_HEADER.command) {
      return { kind: 'command', seqNum: record.seq_num, timestamp: record.timestamp, operation: first[1] };
    }
    for (const [name, value] of headers) {
      if (name.toLowerCase() === RECORD_HEADER.control) return classifyControl(record, headers, value);
    }
  }
  // Refused before anything walks it: a deeper body would overflow a recursive consumer.
  if (jsonTextTooDeep(record.body)) {
    return malformed(record, `body nests deeper than ${MAX_JSON_DEPTH} levels`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(record.body);
  } catch (error) {
    return malformed(record, 'body is not JSON', error);
  }
  if (typeof parsed !== 'object' || parsed === null) return malformed(record, 'body is not an object');
  const { data, id } = parsed as { data?: unknown; id?: unknown };
  if (typeof data !== 'object' || data === null || typeof (data as { type?: unknown }).type !== 'string') {
    return malformed(record, 'body has no `data` chunk with a string `type`');
  }
  const type = (data as { type: string }).type;
  if (type.startsWith(LEGACY_CONTROL_PREFIX)) {
    const token = (data as { publicAccessToken?: unknown }).publicAccessToken;
    return {
      kind: 'control',
      seqNum: record.seq_num,
      timestamp: record.timestamp,
      control: type.slice(LEGACY_CONTROL_PREFIX.length),
      publicAccessToken: typeof token === 'string' && token !== '' ? token : undefined,
      sessionInEventId: undefined,
      legacy: true,
    };
  }
  return {
    kind: 'data',
    seqNum: record.seq_num,
    timestamp: record.timestamp,
    chunk: data as CHUNK,
    partId: typeof id === 'string' ? id : undefined,
  };
}

export function isTurnComplete(record: ClassifiedRecord<unknown>): record is ControlRecord {
  return record.kind === 'control' && record.control === CONTROL.turnComplete;
}

export function isUpgradeRequired(record: ClassifiedRecord<unknown>): record is ControlRecord {
  return record.kind === 'control' && record.control === CONTROL.upgradeRequired;
}
