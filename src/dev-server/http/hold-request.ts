import type { DevServerContext } from '../context.js';
import type { Session } from '../store/session.js';

/** How often a held request looks again at state that no event announces (a run exit, a close). */
const RECHECK_MS = 20;

/**
 * Resolves once `done()` holds, the client has gone (`signal`) or the server is disposed.
 * `done` is checked on every `.out` write (a turn-complete) and every few ms for the rest.
 */
function waitUntil(
  context: DevServerContext,
  session: Session | undefined,
  done: () => boolean,
  signal: AbortSignal | undefined,
): Promise<void> {
  return new Promise((resolve) => {
    const entry = { end: () => finish() };
    // The writer updates the acknowledged `.in` seq right after its append: check after it.
    const unsubscribe = session?.out.subscribe(() => setImmediate(check));
    const timer = setInterval(check, RECHECK_MS);
    timer.unref();
    function finish(): void {
      clearInterval(timer);
      unsubscribe?.();
      signal?.removeEventListener('abort', finish);
      context.streams.delete(entry);
      resolve();
    }
    function check(): void {
      if (done()) finish();
    }
    context.streams.add(entry);
    signal?.addEventListener('abort', finish, { once: true });
    if (signal?.aborted === true) finish();
    else check();
  });
}

/** Holds an append's answer until the turn answering `seq` completed, the run is gone or the session closed. */
export function holdUntilAnswered(
  context: DevServerContext,
  session: Session,
  seq: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  return waitUntil(
    context,
    session,
    () => session.inAckSeq >= seq || session.run === null || session.closed,
    signal,
  );
}

/** Never answers: resolves only when the client gives up or the server is disposed. */
export function hangUntilGone(context: DevServerContext, signal: AbortSignal | undefined): Promise<void> {
  return waitUntil(context, undefined, () => false, signal);
}
