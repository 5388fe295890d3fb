import type { ClientEnvironment } from '../client/environment.js';

/**
 * A stop decided by an abort, sent on the next tick unless cancelled first. The delay is
 * what tells a user's stop from an unmount: `useChat` aborts on unmount too, and the
 * durable hooks (or AI SDK 7's `dispose()`) then disconnect in the same tick.
 */
export class DeferredStop {
  #pending: (() => void) | undefined;
  #handle: unknown;
  readonly #env: Pick<ClientEnvironment, 'setTimeout' | 'clearTimeout'>;

  constructor(env: Pick<ClientEnvironment, 'setTimeout' | 'clearTimeout'>) {
    this.#env = env;
  }

  /** Schedules `send` for the next tick (a stop already scheduled is sent now). */
  schedule(send: () => void): void {
    this.flush();
    this.#pending = send;
    this.#handle = this.#env.setTimeout(() => this.flush(), 0);
  }

  /** Sends a scheduled stop now: before a send, so the stop never overtakes it. */
  flush(): void {
    const send = this.#pending;
    this.cancel();
    send?.();
  }

  /** Drops a scheduled stop: the abort was a disconnect. */
  cancel(): void {
    if (this.#pending === undefined) return;
    this.#env.clearTimeout(this.#handle);
    this.#pending = undefined;
  }
}
