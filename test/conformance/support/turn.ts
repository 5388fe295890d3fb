import type { UIMessageChunk } from 'ai';
import {
  type ClassifiedRecord,
  type ControlRecord,
  type DataRecord,
  isTurnComplete,
} from '../../../src/protocol/index.js';

/** One turn as read from `.out`: the records after the cursor through its turn-complete. */
export interface Turn {
  records: ClassifiedRecord[];
  data: DataRecord[];
  chunkTypes: string[];
  /** Concatenated `text-delta` deltas. */
  text: string;
  turnComplete: ControlRecord;
}

/**
 * Finds the turn-complete that answers an append: the first one after the cursor, or, when
 * the append reported its `.in` seq and the record names the consumed `.in` seq, the first
 * one that has consumed it (an earlier turn-complete belongs to another turn).
 */
export function findTurn(records: readonly ClassifiedRecord[], appendSeq?: number): Turn | undefined {
  let start = 0;
  for (let index = 0; index < records.length; index++) {
    const record = records[index];
    if (record === undefined || !isTurnComplete(record)) continue;
    const answers =
      appendSeq === undefined ||
      record.sessionInEventId === undefined ||
      record.sessionInEventId >= appendSeq;
    if (!answers) {
      start = index + 1;
      continue;
    }
    const turnRecords = records.slice(start, index + 1);
    const data = turnRecords.filter((candidate): candidate is DataRecord => candidate.kind === 'data');
    return {
      records: turnRecords,
      data,
      chunkTypes: data.map((entry) => (entry.chunk as { type: string }).type),
      text: textOf(data),
      turnComplete: record,
    };
  }
  return undefined;
}

export function textOf(data: readonly DataRecord[]): string {
  let text = '';
  for (const entry of data) {
    const chunk = entry.chunk as UIMessageChunk;
    if (chunk.type === 'text-delta') text += chunk.delta;
  }
  return text;
}

/** True when a turn carried content: the spec's test for a turn the agent did not reject. */
export function hasContent(turn: Turn): boolean {
  return turn.chunkTypes.some((type) => type === 'text-delta' || type.startsWith('tool-input-'));
}
