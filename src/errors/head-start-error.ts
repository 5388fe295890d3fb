import { DurableChatError } from './durable-chat-error.js';

/**
 * The first reply of a head start (made by the app's own route) failed or was cut off. That
 * reply was never on `.out`, so it cannot be resumed; what was said reached the agent, and the
 * chat goes on through `.in` (regenerate, or send again).
 */
export class HeadStartError extends DurableChatError {
  override readonly code = 'HEAD_START_FAILED' as const;
  constructor(message: string, cause?: unknown) {
    super({ code: 'HEAD_START_FAILED', message, retryable: false, cause });
    this.name = 'HeadStartError';
  }
}
