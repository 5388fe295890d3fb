import type { UIMessageChunk } from 'ai';
import { COMMAND_TRIM, CONTROL, LEGACY_CONTROL_PREFIX, RECORD_HEADER } from './headers.js';
import type { OutRecord, RecordHeader } from './types.js';

/** Writes `.out` records in the wire's shapes (the dev server and tests use these). */
export function dataRecord<CHUNK = UIMessageChunk>(
  seqNum: number,
  timestamp: number,
  chunk: CHUNK,
  partId: string,
): OutRecord {
  return { seq_num: seqNum, timestamp, body: JSON.stringify({ data: chunk, id: partId }), headers: [] };
}

/**
 * `dataRecord` for a chunk already serialised (`JSON.stringify(chunk)`): the same body, built
 * without a second pass over the chunk, so a writer can serialise where a failure is catchable.
 */
export function dataRecordFromJson(
  seqNum: number,
  timestamp: number,
  chunkJson: string,
  partId: string,
): OutRecord {
  return {
    seq_num: seqNum,
    timestamp,
    body: `{"data":${chunkJson},"id":${JSON.stringify(partId)}}`,
    headers: [],
  };
}

export function controlRecord(
  seqNum: number,
  timestamp: number,
  control: string,
  extra: { publicAccessToken?: string; sessionInEventId?: number } = {},
): OutRecord {
  const headers: RecordHeader[] = [[RECORD_HEADER.control, control]];
  if (extra.publicAccessToken !== undefined)
    headers.push([RECORD_HEADER.publicAccessToken, extra.publicAccessToken]);
  if (extra.sessionInEventId !== undefined) {
    headers.push([RECORD_HEADER.sessionInEventId, String(extra.sessionInEventId)]);
  }
  return { seq_num: seqNum, timestamp, body: '', headers };
}

export function turnCompleteRecord(
  seqNum: number,
  timestamp: number,
  extra: { publicAccessToken?: string; sessionInEventId?: number } = {},
): OutRecord {
  return controlRecord(seqNum, timestamp, CONTROL.turnComplete, extra);
}

export function commandRecord(
  seqNum: number,
  timestamp: number,
  operation = COMMAND_TRIM,
  body = '',
): OutRecord {
  return { seq_num: seqNum, timestamp, body, headers: [[RECORD_HEADER.command, operation]] };
}

/** The old data-record form of a control marker, still recognised by readers. */
export function legacyControlRecord(
  seqNum: number,
  timestamp: number,
  control: string,
  partId: string,
  publicAccessToken?: string,
): OutRecord {
  const chunk: Record<string, string> = { type: `${LEGACY_CONTROL_PREFIX}${control}` };
  if (publicAccessToken !== undefined) chunk.publicAccessToken = publicAccessToken;
  return dataRecord(seqNum, timestamp, chunk, partId);
}
