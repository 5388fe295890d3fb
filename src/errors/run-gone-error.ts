import { DurableChatError } from './durable-chat-error.js';

/**
 * A live turn ended without its turn-complete because the agent run serving it is gone
 * (crashed, cancelled, or the session was swapped to another run), or because it stayed
 * silent past the bound when nothing can tell whether it lives. Not retryable and not a
 * network disconnect: resuming would replay the same cut turn. The partial reply stays as
 * it is; the next send starts a continuation run.
 */
export class RunGoneError extends DurableChatError {
  override readonly code = 'RUN_GONE' as const;
  /** Why the turn was given up: the session row said so, or the silence bound ran out. */
  readonly reason: 'run-gone' | 'silence';
  readonly silentForMs: number;

  constructor(options: { reason: 'run-gone' | 'silence'; silentForMs: number }) {
    const seconds = Math.round(options.silentForMs / 1000);
    super({
      code: 'RUN_GONE',
      message:
        options.reason === 'run-gone'
          ? `the agent run is gone (no record for ${seconds} s); the reply is incomplete`
          : `the agent sent nothing for ${seconds} s and its run's liveness is unknown; the turn was given up`,
      retryable: false,
    });
    this.name = 'RunGoneError';
    this.reason = options.reason;
    this.silentForMs = options.silentForMs;
  }
}
