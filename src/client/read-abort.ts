/** What a `.out` read and the waits inside it need of an abort signal. */
export interface AbortLike {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * Ends one `.out` read. It stands in for an `AbortController` where nothing but the read
 * listens: Node's `AbortSignal` is an `EventTarget` of about 0.75 KiB, held for a whole turn
 * by every live chat, while the read needs only a flag, a reason and a listener or two (its
 * connection's controller, a backoff's wait).
 */
export class ReadAbort implements AbortLike {
  #aborted = false;
  #reason: unknown;
  #listeners: (() => void)[] | undefined;

  get aborted(): boolean {
    return this.#aborted;
  }

  get reason(): unknown {
    return this.#reason;
  }

  abort(reason?: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    // As `AbortController.abort()`: no reason given is an `AbortError`.
    this.#reason = reason ?? new DOMException('This operation was aborted', 'AbortError');
    const listeners = this.#listeners;
    this.#listeners = undefined;
    if (listeners !== undefined) for (const listener of listeners) listener();
  }

  /** Listeners run once, on the abort (every listener is `once`). */
  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.#aborted) return;
    if (this.#listeners === undefined) this.#listeners = [listener];
    else this.#listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const listeners = this.#listeners;
    if (listeners === undefined) return;
    const at = listeners.indexOf(listener);
    if (at !== -1) listeners.splice(at, 1);
  }
}
