import { DurableChatError } from './durable-chat-error.js';

export type ConnectionErrorCode = 'NETWORK_ERROR' | 'STREAM_DISCONNECTED' | 'TOKEN_UNAVAILABLE' | 'ABORTED';

/**
 * The connection failed. `STREAM_DISCONNECTED` means reconnects ran out with a turn still
 * live: the reply is incomplete, and resuming later (reconnectToStream) can finish it.
 */
export class ConnectionError extends DurableChatError {
  override readonly code: ConnectionErrorCode;
  constructor(options: { code: ConnectionErrorCode; message: string; cause?: unknown }) {
    super({ ...options, retryable: options.code !== 'ABORTED' });
    this.name = 'ConnectionError';
    this.code = options.code;
  }
}

/**
 * The agent answered a `submit-message` with a turn-complete and no content: the spec's
 * sign of metadata or an action that failed the agent's schema.
 */
export class TurnRejectedError extends DurableChatError {
  override readonly code = 'TURN_REJECTED' as const;
  constructor(message = 'the agent ended the turn with no content (likely a validation failure)') {
    super({ code: 'TURN_REJECTED', message, retryable: false });
    this.name = 'TurnRejectedError';
  }
}
