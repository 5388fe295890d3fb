import type { ChatSessionState, ConnectionStatus } from '../client/session-store.js';
import type { DurableChatError } from '../errors/durable-chat-error.js';

/** What `useChatSession` returns as `state`: the store without the token itself. */
export interface SessionView {
  chatId: string;
  sessionId: string | undefined;
  runId: string | undefined;
  /** Last `seq_num` processed on `.out`. */
  lastEventId: number | undefined;
  /** Token expiry, epoch ms. */
  tokenExpiresAt: number | undefined;
  /** `.out` connection: idle, connecting, streaming, reconnecting (attempt, nextRetryAt), closed, error. */
  status: ConnectionStatus;
  turnLive: boolean;
  closed: boolean;
  closedReason: string | null;
  lastError: DurableChatError | undefined;
  /** The persisted record has been loaded. */
  hydrated: boolean;
}

export function toSessionView(state: ChatSessionState): SessionView {
  return {
    chatId: state.chatId,
    sessionId: state.sessionId,
    runId: state.runId,
    lastEventId: state.lastEventId,
    tokenExpiresAt: state.tokenExpiresAt,
    status: state.status,
    turnLive: state.turnLive,
    closed: state.closed,
    closedReason: state.closedReason,
    lastError: state.lastError,
    hydrated: state.hydrated,
  };
}
