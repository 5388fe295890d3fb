import { DataFolderError } from '../../errors/data-folder-error.js';
import type { OutRecord, SessionRow } from '../../protocol/types.js';
import type { InRecord } from './in-log.js';
import type { InFlightTurn } from './session.js';

/** The part of a session that is neither `.in` nor `.out`: its row and where its runs stand. */
export interface StoredSessionState {
  row: SessionRow;
  inAckSeq: number;
  lastTurnCompleteSeq: number | null;
  chatStarted: boolean;
  preloaded: boolean;
  runCount: number;
  lastRunId: string | null;
  inFlight: InFlightTurn | null;
  /** The turn a run was streaming (`.in` seq; null: the first run's create message), if any. */
  liveTurn: { inSeq: number | null } | null;
}

/** Where both logs start, written first in a compacted journal. */
export interface JournalBase {
  outFirstSeq: number;
  outLastTimestamp: number;
  inNextSeq: number;
  /** Part ids remembered for idempotent appends, oldest first, with their seq. */
  parts: [string, number][];
}

/**
 * One line of a session's journal: everything recorded between two writes. A line is one
 * JSON object and `JSON.stringify` never emits a raw newline, so a line that ends in `\n`
 * is whole: a crash can only cut the last one short.
 */
export interface JournalBatch {
  /** Present on the first line of a compacted journal: the logs start here, not at 0. */
  base?: JournalBase;
  in?: InRecord[];
  out?: OutRecord[];
  /** `.out` records before this seq were trimmed. */
  trim?: number;
  /** `.in` seqs of stop records that already aborted a turn. */
  spent?: number[];
  /** The session's state as of the end of this batch. */
  state?: StoredSessionState;
}

export function encodeBatch(batch: JournalBatch): string {
  return `${JSON.stringify(batch)}\n`;
}

export interface ParsedJournal {
  batches: JournalBatch[];
  /** Bytes of whole lines: the file is cut back to this before more is appended. */
  validBytes: number;
  /** Bytes after them: the last write, cut short by a crash (0 when the file ended cleanly). */
  tornBytes: number;
}

const NEWLINE = 0x0a;

function parseLine(bytes: Buffer): JournalBatch | undefined {
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as JournalBatch)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reads a journal. The last line may be torn (no newline, or a prefix that does not parse:
 * the process died mid-write, before that write was acknowledged): it is left out. A line
 * before it that does not parse cannot come from a crash, since every write waits for the
 * one before it, so the journal is refused rather than silently shortened.
 */
export function parseJournal(bytes: Buffer, path: string): ParsedJournal {
  const batches: JournalBatch[] = [];
  let start = 0;
  while (start < bytes.length) {
    const end = bytes.indexOf(NEWLINE, start);
    if (end === -1) break;
    const batch = parseLine(bytes.subarray(start, end));
    if (batch === undefined) {
      if (end + 1 === bytes.length) break;
      throw new DataFolderError({
        code: 'DATA_FOLDER_CORRUPT',
        path,
        message: `${path}: line ${batches.length + 1} is damaged and more follows (not a crash's torn last write); move the file away to start that session over`,
      });
    }
    batches.push(batch);
    start = end + 1;
  }
  return { batches, validBytes: start, tornBytes: bytes.length - start };
}
