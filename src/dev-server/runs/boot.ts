import type { UIMessage } from 'ai';
import type { SessionSnapshot } from '../../protocol/types.js';
import type { DevServerContext } from '../context.js';
import type { Session } from '../store/session.js';
import { mergeById, replayOut } from './history.js';

export interface BootResult {
  messages: UIMessage[];
  /** A `.in` record already answered by the splice: the run must not answer it again. */
  skipSeq: number | null;
  /** The first run's message to answer again (its run was swapped by an upgrade). */
  rerun: UIMessage | undefined;
}

async function readSnapshot(
  context: DevServerContext,
  session: Session,
): Promise<SessionSnapshot | undefined> {
  try {
    return await context.objectStore.readSnapshot(session.row.id);
  } catch (error) {
    // A corrupt or unreadable snapshot counts as missing, as the spec says for absent ones.
    context.logger.warn(`session ${session.row.id}: snapshot unreadable, booting without it`, error);
    return undefined;
  }
}

function inMessage(session: Session, seq: number | null): UIMessage | undefined {
  if (seq === null) return undefined;
  const record = session.in.from(seq).find((candidate) => candidate.seq === seq);
  return record?.chunk.kind === 'message' ? record.chunk.payload.message : undefined;
}

/**
 * Path B of the spec: snapshot, then the `.out` tail after it replayed through the AI SDK
 * reducer, merged by id (replay wins). A partial answer left by a crashed run is dropped,
 * unless the run died mid-answer: then the unanswered user message and the partial answer
 * are spliced onto the history. Path A (`hydrateMessages`) skips all of it.
 */
export async function bootMessages(context: DevServerContext, session: Session): Promise<BootResult> {
  const inFlight = session.inFlight;
  session.inFlight = null;
  session.changed();
  const rerun =
    inFlight !== null && !inFlight.splice && inFlight.inSeq === null ? inFlight.message : undefined;
  if (session.agent.hydrateMessages !== undefined) {
    return { messages: [], skipSeq: inFlight?.splice === true ? inFlight.inSeq : null, rerun };
  }
  const snapshot = await readSnapshot(context, session);
  const from = snapshot?.lastOutEventId == null ? 0 : snapshot.lastOutEventId + 1;
  const known = new Map((snapshot?.messages ?? []).map((message) => [message.id, message]));
  const replay = await replayOut(session.out.readWritten(from), known, context.logger);
  let messages = mergeById(snapshot?.messages ?? [], replay.completed);
  if (inFlight?.splice !== true) return { messages, skipSeq: null, rerun };
  const unanswered = inFlight.message ?? inMessage(session, inFlight.inSeq);
  const spliced: UIMessage[] = [];
  if (unanswered !== undefined && unanswered.role === 'user') spliced.push(unanswered);
  if (replay.trailing !== undefined) spliced.push(replay.trailing);
  messages = mergeById(messages, spliced);
  return { messages, skipSeq: inFlight.inSeq, rerun };
}
