import type { DurableChatErrorCode } from './durable-chat-error.js';

const marker = Symbol.for('durable-chat.error');

/**
 * A live reply was cut off and reconnecting ran out. It extends `TypeError` with
 * "network" in its message on purpose: that is how the AI SDK's `Chat` recognises a
 * network disconnect and keeps the partial reply resumable (`resumeStream()` later
 * finishes it). `isDurableChatError()` still recognises it; `code` is `STREAM_DISCONNECTED`.
 */
export class StreamDisconnectedError extends TypeError {
  readonly [marker] = true;
  readonly code: DurableChatErrorCode = 'STREAM_DISCONNECTED';
  readonly retryable = true;
  readonly status: number | undefined = undefined;

  constructor(options: { detail?: string; cause?: unknown } = {}) {
    const detail = options.detail === undefined ? '' : `: ${options.detail}`;
    super(`network connection lost while streaming the reply${detail}`, { cause: options.cause });
    this.name = 'StreamDisconnectedError';
  }
}
