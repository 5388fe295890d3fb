import type { UIMessage } from 'ai';
import type { DevServerContext } from '../context.js';
import type { Session } from '../store/session.js';

/**
 * Writes the spec's snapshot after a turn: the history and the `.out` cursor at its end.
 * With `hydrateMessages` the app owns history, so nothing is written. A failed write is
 * reported, not fatal: the next boot replays more of `.out` instead.
 */
export async function writeSnapshot(
  context: DevServerContext,
  session: Session,
  messages: UIMessage[],
): Promise<void> {
  if (session.agent.hydrateMessages !== undefined) return;
  try {
    // The snapshot must not name `.out` records a crash could still take back: the trim it
    // allows would leave neither them nor their history.
    await session.durable();
    await context.objectStore.writeSnapshot(session.row.id, {
      version: 1,
      messages,
      lastOutEventId: session.out.nextSeq - 1,
      lastOutTimestamp: session.out.newestTimestamp,
      savedAt: Date.now(),
    });
  } catch (error) {
    context.logger.warn(`session ${session.row.id}: snapshot write failed`, error);
  }
}
