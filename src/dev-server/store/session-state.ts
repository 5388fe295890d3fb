import { DataFolderError } from '../../errors/data-folder-error.js';
import type { OutRecord } from '../../protocol/types.js';
import type { AnyAgent } from '../agents/define-agent.js';
import type { InRecord } from './in-log.js';
import type { JournalBatch, StoredSessionState } from './journal-format.js';
import { Session } from './session.js';

/** The session's row and run state, as a journal keeps it. */
export function captureState(session: Session): StoredSessionState {
  return {
    row: session.row,
    inAckSeq: session.inAckSeq,
    lastTurnCompleteSeq: session.lastTurnCompleteSeq,
    chatStarted: session.chatStarted,
    preloaded: session.preloaded,
    runCount: session.runCount,
    lastRunId: session.lastRunId,
    inFlight: session.inFlight,
    liveTurn: session.liveTurn,
  };
}

/** A compacted journal's first line: everything the session holds now. */
export function captureBase(session: Session): JournalBatch {
  return {
    base: {
      outFirstSeq: session.out.oldestSeq,
      outLastTimestamp: session.out.newestTimestamp,
      inNextSeq: session.in.nextSeq,
      parts: session.in.rememberedParts(),
    },
    in: session.in.from(0),
    out: session.out.readWritten(0),
    state: captureState(session),
  };
}

export interface Replayed {
  state: StoredSessionState | undefined;
  outFirstSeq: number;
  outRecords: OutRecord[];
  outLastTimestamp: number;
  inRecords: InRecord[];
  inNextSeq: number;
  parts: Map<string, number>;
}

function gap(path: string, what: string): DataFolderError {
  return new DataFolderError({
    code: 'DATA_FOLDER_CORRUPT',
    path,
    message: `${path}: ${what}; move the file away to start that session over`,
  });
}

/** Applies every batch in order: the logs and the latest state as the dead process left them. */
export function replayBatches(batches: readonly JournalBatch[], path: string): Replayed {
  const replayed: Replayed = {
    state: undefined,
    outFirstSeq: 0,
    outRecords: [],
    outLastTimestamp: 0,
    inRecords: [],
    inNextSeq: 0,
    parts: new Map(),
  };
  for (const batch of batches) {
    if (batch.base !== undefined) {
      replayed.outFirstSeq = batch.base.outFirstSeq;
      replayed.outLastTimestamp = batch.base.outLastTimestamp;
      replayed.outRecords = [...(batch.out ?? [])];
      replayed.inRecords = [...(batch.in ?? [])];
      replayed.inNextSeq = batch.base.inNextSeq;
      replayed.parts = new Map(batch.base.parts);
    } else {
      for (const record of batch.in ?? []) {
        if (record.seq !== replayed.inNextSeq)
          throw gap(path, `.in seq ${record.seq} follows ${replayed.inNextSeq - 1}`);
        replayed.inRecords.push(record);
        replayed.parts.set(record.partId, record.seq);
        replayed.inNextSeq = record.seq + 1;
      }
      for (const record of batch.out ?? []) {
        const expected = replayed.outFirstSeq + replayed.outRecords.length;
        if (record.seq_num !== expected)
          throw gap(path, `.out seq_num ${record.seq_num} where ${expected} was due`);
        replayed.outRecords.push(record);
        replayed.outLastTimestamp = record.timestamp;
      }
    }
    if (batch.trim !== undefined) {
      const count = Math.min(Math.max(0, batch.trim - replayed.outFirstSeq), replayed.outRecords.length);
      replayed.outRecords = replayed.outRecords.slice(count);
      replayed.outFirstSeq += count;
    }
    for (const seq of batch.spent ?? []) {
      const record = replayed.inRecords.find((candidate) => candidate.seq === seq);
      if (record !== undefined) record.spent = true;
    }
    if (batch.state !== undefined) replayed.state = batch.state;
  }
  return replayed;
}

/**
 * The session a dead process left, ready to serve. No run survives its process: the row
 * names none, and a turn that was streaming is left as a crash leaves it (the next append
 * starts a continuation that splices the partial answer), as the spec's run table says.
 */
export function rebuildSession(replayed: Replayed, state: StoredSessionState, agent: AnyAgent): Session {
  const row = { ...state.row, currentRunId: null };
  const session = new Session(row, agent);
  session.out.restore(replayed.outFirstSeq, replayed.outRecords, replayed.outLastTimestamp);
  const held = replayed.inRecords.filter((record) => record.seq > state.inAckSeq);
  session.in.restore(held, replayed.inNextSeq, replayed.parts);
  session.inAckSeq = state.inAckSeq;
  session.lastTurnCompleteSeq = state.lastTurnCompleteSeq;
  session.chatStarted = state.chatStarted;
  session.preloaded = state.preloaded;
  session.runCount = state.runCount;
  session.lastRunId = state.lastRunId;
  const cut = state.liveTurn;
  session.inFlight =
    cut === null
      ? state.inFlight
      : {
          inSeq: cut.inSeq,
          message: cut.inSeq === null ? row.triggerConfig.basePayload.message : undefined,
          splice: true,
        };
  return session;
}
