import type { SessionRow } from '../protocol/types.js';
import type { RunState, Session } from './store/session.js';

/** A session as tests and the admin endpoint see it: row, run state and log sizes. */
export interface SessionInfo {
  row: SessionRow;
  run: { id: string; state: RunState; turns: number } | null;
  runCount: number;
  out: { oldestSeq: number; nextSeq: number; records: number };
  in: { nextSeq: number; records: number; acknowledgedSeq: number };
}

export function describeSession(session: Session): SessionInfo {
  const run = session.run;
  return {
    row: structuredClone(session.row),
    run: run === null ? null : { id: run.id, state: run.state, turns: run.turns },
    runCount: session.runCount,
    out: { oldestSeq: session.out.oldestSeq, nextSeq: session.out.nextSeq, records: session.out.size },
    in: { nextSeq: session.in.nextSeq, records: session.in.size, acknowledgedSeq: session.inAckSeq },
  };
}
