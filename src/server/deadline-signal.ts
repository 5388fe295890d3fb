/**
 * One attempt's abort signal: the caller's signal (if any) plus a deadline. Built from an
 * `AbortController`, a timer and one listener instead of `AbortSignal.any` /
 * `AbortSignal.timeout`, which edge runtimes (Next.js edge, Vercel Edge) lack. `dispose()`
 * clears the timer and removes the listener, so a long-lived caller signal does not
 * collect one listener per request.
 */
export interface DeadlineSignal {
  readonly signal: AbortSignal;
  /** True when the deadline (not the caller) aborted the signal. */
  readonly timedOut: boolean;
  dispose(): void;
}

export function deadlineSignal(timeoutMs: number, caller: AbortSignal | undefined): DeadlineSignal {
  const controller = new AbortController();
  let timedOut = false;
  const onCallerAbort = () => controller.abort(caller?.reason);
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError'));
  }, timeoutMs);
  if (caller?.aborted) onCallerAbort();
  else caller?.addEventListener('abort', onCallerAbort, { once: true });
  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    dispose() {
      clearTimeout(timer);
      caller?.removeEventListener('abort', onCallerAbort);
    },
  };
}
