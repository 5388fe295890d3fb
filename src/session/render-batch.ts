import type { ClientEnvironment } from '../client/environment.js';

type Timer = Pick<ClientEnvironment, 'setTimeout'>;

/**
 * Tells React about a session's changes once per task instead of once per change, while the
 * page's own request runs.
 *
 * A request moves the session store and the request's phase several times within one task,
 * each step a few promise hops after the last (the append's answer marks the turn live, then
 * the phase `appended`; the reply's last chunk ends the turn, then the phase `none`). React
 * commits each store notice in its own microtask, so every hop was a commit of its own.
 * Held to the end of the task, the notices of one task become one commit, and a notice whose
 * change a commit of `useChat` already showed (its render reads the stores) becomes none:
 * `useSyncExternalStore` re-renders only when the snapshot it last rendered moved.
 *
 * Between requests a notice goes through at once: an awaited `close()` (or anything else the
 * app awaits while no request runs) has rendered by the time it resolves, as before.
 */
export class RenderBatch {
  readonly #timer: Timer;
  readonly #requestRuns: () => boolean;
  readonly #pending = new Set<() => void>();
  #scheduled = false;

  /** `requestRuns`: whether the page's own request (a send, a resume) is in flight. */
  constructor(timer: Timer, requestRuns: () => boolean) {
    this.#timer = timer;
    this.#requestRuns = requestRuns;
  }

  /** `subscribe` for `useSyncExternalStore`, whose listener hears the source's changes at the end of the task. */
  batched(subscribe: (listener: () => void) => () => void): (listener: () => void) => () => void {
    return (listener) => {
      const unsubscribe = subscribe(() => this.#hold(listener));
      return () => {
        this.#pending.delete(listener);
        unsubscribe();
      };
    };
  }

  #hold(listener: () => void): void {
    // A request's last notice (its phase back to `none`) joins the notices held in its task.
    if (!this.#scheduled && !this.#requestRuns()) {
      listener();
      return;
    }
    this.#pending.add(listener);
    if (this.#scheduled) return;
    this.#scheduled = true;
    this.#timer.setTimeout(this.#flush, 0);
  }

  // One synchronous run of every held listener: React batches their updates into one commit.
  readonly #flush = (): void => {
    this.#scheduled = false;
    const listeners = [...this.#pending];
    this.#pending.clear();
    for (const listener of listeners) listener();
  };
}
