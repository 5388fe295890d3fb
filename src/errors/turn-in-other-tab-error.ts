import { DurableChatError } from './durable-chat-error.js';

/**
 * Another tab of this browser owns the chat's live turn, so this tab refused to start one
 * (two tabs must never both drive a turn). Retryable: once that turn completes, or that
 * tab goes away, sending works again.
 */
export class TurnInOtherTabError extends DurableChatError {
  override readonly code = 'TURN_IN_OTHER_TAB' as const;
  constructor(message = "another tab owns this chat's live turn; it is shown here read-only") {
    super({ code: 'TURN_IN_OTHER_TAB', message, retryable: true });
    this.name = 'TurnInOtherTabError';
  }
}
