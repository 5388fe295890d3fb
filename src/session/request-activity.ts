/**
 * What the chat's transport is doing for this page right now, seen from the transport
 * itself (so `useChatSession` can show a status without reading `useChat`'s):
 * `sending` (appending), `appended` (stored, no chunk yet), `resuming` (reconnecting to a
 * live turn), `receiving` (chunks flow), `none`. `error` is the last request's failure.
 */
export type ActivityPhase = 'none' | 'sending' | 'appended' | 'resuming' | 'receiving';

export interface RequestActivity {
  phase: ActivityPhase;
  error: Error | undefined;
}

const IDLE: RequestActivity = { phase: 'none', error: undefined };

/** One request's handle on the tracker: its updates are ignored once a newer request began. */
export type ActivityUpdate = (phase: ActivityPhase, error?: Error) => void;

/** A tiny store of the current request's phase, one per chat session handle. */
export class ActivityTracker {
  #state: RequestActivity = IDLE;
  #generation = 0;
  readonly #listeners = new Set<() => void>();

  readonly get = (): RequestActivity => this.#state;

  readonly subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };

  /** A new request (send, resume) starts in `phase`; returns how it reports its next phases. */
  begin(phase: ActivityPhase): ActivityUpdate {
    this.#generation += 1;
    const mine = this.#generation;
    this.#set(phase);
    return (next, error) => {
      if (this.#generation === mine) this.#set(next, error);
    };
  }

  /** Forgets the last request's error once the chat has let go of it (`useChat`'s `clearError()`); a request in flight is left alone. */
  clearError(): void {
    if (this.#state.phase === 'none' && this.#state.error !== undefined) this.#set('none');
  }

  /** Forgets the last error (a new send, or the chat was cleared). */
  reset(): void {
    this.#generation += 1;
    this.#set('none');
  }

  #set(phase: ActivityPhase, error?: Error): void {
    const next = { phase, error: phase === 'none' ? error : undefined };
    if (next.phase === this.#state.phase && next.error === this.#state.error) return;
    this.#state = next;
    for (const listener of [...this.#listeners]) listener();
  }
}
