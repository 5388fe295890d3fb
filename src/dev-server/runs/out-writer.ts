import type { UIMessageChunk } from 'ai';
import { COMMAND_TRIM, CONTROL } from '../../protocol/headers.js';
import {
  commandRecord,
  controlRecord,
  dataRecord,
  dataRecordFromJson,
  turnCompleteRecord,
} from '../../protocol/record-builders.js';
import { classifyRecord } from '../../protocol/records.js';
import type { DevServerContext } from '../context.js';
import { newPartId } from '../ids.js';
import type { Session } from '../store/session.js';
import { sessionScopes } from '../tokens.js';

/** Appends chunks as data records in one write (one wake-up for every reader). */
export function writeChunks(session: Session, chunks: readonly UIMessageChunk[]): void {
  session.out.append(
    chunks.map(
      (chunk) => (seqNum: number, timestamp: number) => dataRecord(seqNum, timestamp, chunk, newPartId()),
    ),
  );
}

/** As `writeChunks`, for chunks the caller has already serialised with `JSON.stringify`. */
export function writeSerialisedChunks(session: Session, chunksJson: readonly string[]): void {
  session.out.append(
    chunksJson.map(
      (json) => (seqNum: number, timestamp: number) =>
        dataRecordFromJson(seqNum, timestamp, json, newPartId()),
    ),
  );
}

export function writeUpgradeRequired(session: Session): void {
  session.out.append([(seqNum, timestamp) => controlRecord(seqNum, timestamp, CONTROL.upgradeRequired)]);
}

/**
 * Ends a turn on `.out`: the turn-complete control record (with a refreshed token unless
 * the turn failed, and the `.in` cursor it answers), then the trim command back to the
 * previous turn-complete, whose effect lands after the trim delay. The spec writes the trim
 * "after each turn-complete", the first one included: with no earlier turn-complete it
 * targets the oldest record held, so it trims nothing.
 */
export async function writeTurnComplete(
  context: DevServerContext,
  session: Session,
  options: { inSeq: number | null; runId: string; refreshToken: boolean },
): Promise<void> {
  const token = options.refreshToken
    ? await context.tokens.mint(session.tokenKey, sessionScopes(session.tokenKey, options.runId))
    : undefined;
  const previous = session.lastTurnCompleteSeq;
  const correlate = context.faults.wire.sessionInEventId;
  const extra = {
    publicAccessToken: token,
    sessionInEventId: correlate ? (options.inSeq ?? undefined) : undefined,
  };
  const target = previous ?? session.out.oldestSeq;
  const written = session.out.append([
    (seqNum, timestamp) => turnCompleteRecord(seqNum, timestamp, extra),
    (seqNum, timestamp) => commandRecord(seqNum, timestamp, COMMAND_TRIM, String(target)),
  ]);
  const [turnComplete] = written;
  if (turnComplete !== undefined) session.lastTurnCompleteSeq = turnComplete.seq_num;
  if (options.inSeq !== null && options.inSeq > session.inAckSeq) {
    session.inAckSeq = options.inSeq;
    session.in.release(options.inSeq);
  }
  session.changed();
  if (previous !== null) scheduleTrim(context, session, previous);
}

/**
 * After a restart: the trims the dead process had scheduled (the targets of the trim
 * commands still on `.out` past its oldest record) are scheduled again, from now.
 */
export function resumeTrims(context: DevServerContext, session: Session): void {
  let target = session.out.oldestSeq;
  for (const record of session.out.readWritten(session.out.oldestSeq)) {
    const classified = classifyRecord(record);
    if (classified.kind !== 'command' || classified.operation !== COMMAND_TRIM) continue;
    const before = Number(record.body);
    if (Number.isSafeInteger(before) && before > target) target = before;
  }
  if (target > session.out.oldestSeq) scheduleTrim(context, session, target);
}

/** Trims `.out` back to `beforeSeq` once the (eventually consistent) trim delay has passed. */
export function scheduleTrim(context: DevServerContext, session: Session, beforeSeq: number): void {
  const delay = context.trim.delayMs;
  if (delay <= 0) {
    session.out.trim(beforeSeq);
    return;
  }
  const timer = setTimeout(() => {
    session.trimTimers.delete(timer);
    session.out.trim(beforeSeq);
  }, delay);
  timer.unref();
  session.trimTimers.add(timer);
}
