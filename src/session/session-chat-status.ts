import type { ChatStatus } from 'ai';
import type { ChatSessionState } from '../client/session-store.js';

/**
 * One status a chat UI can show, combining useChat's status with the session's connection.
 * - `sending`: the message is being appended.
 * - `waking`: appended; the agent has not streamed yet (cold start, resume from suspension).
 * - `resuming`: reconnecting to a turn that was live when the page (re)loaded.
 * - `streaming`: chunks are arriving (`following`: another tab owns the turn).
 * - `waiting`: the turn is live but the agent has sent nothing for `silentForMs` (a slow tool,
 *   or a run that is being checked for liveness); the turn ends with `RUN_GONE` if it died.
 * - `reconnecting`: the connection dropped; the next attempt is in `retryInMs`.
 * - `closed`: the session is closed for good. `error`: the last turn failed.
 */
export type SessionChatStatus =
  | { type: 'ready' }
  | { type: 'sending' }
  | { type: 'waking' }
  | { type: 'resuming' }
  | { type: 'streaming'; following: boolean }
  | { type: 'waiting'; silentForMs: number; following: boolean }
  | { type: 'reconnecting'; attempt: number; nextRetryAt: number; retryInMs: number }
  | { type: 'closed'; reason: string | null }
  | { type: 'error'; error: Error };

/** What the hook knows beyond useChat's status: the last step of the current request. */
export type RequestPhase = 'none' | 'appended' | 'resuming' | 'receiving';

export interface StatusInputs {
  chatStatus: ChatStatus;
  chatError: Error | undefined;
  session: Pick<ChatSessionState, 'status' | 'closed' | 'closedReason'>;
  phase: RequestPhase;
  following: boolean;
  now: number;
}

export function deriveSessionChatStatus(inputs: StatusInputs): SessionChatStatus {
  const { chatStatus, session } = inputs;
  if (session.closed) return { type: 'closed', reason: session.closedReason };
  const busy = chatStatus === 'submitted' || chatStatus === 'streaming';
  if (busy && session.status.type === 'reconnecting') {
    const { attempt, nextRetryAt } = session.status;
    return { type: 'reconnecting', attempt, nextRetryAt, retryInMs: Math.max(0, nextRetryAt - inputs.now) };
  }
  if (busy && session.status.type === 'waiting') {
    return { type: 'waiting', silentForMs: session.status.silentForMs, following: inputs.following };
  }
  // The first chunk reached the stream a moment before useChat says "streaming".
  if (chatStatus === 'streaming' || (chatStatus === 'submitted' && inputs.phase === 'receiving')) {
    return { type: 'streaming', following: inputs.following };
  }
  if (chatStatus === 'submitted') {
    if (inputs.phase === 'resuming') return { type: 'resuming' };
    return inputs.phase === 'appended' ? { type: 'waking' } : { type: 'sending' };
  }
  if (chatStatus === 'error' && inputs.chatError !== undefined)
    return { type: 'error', error: inputs.chatError };
  return { type: 'ready' };
}

/** A short English label for a status, e.g. "Reconnecting in 3 s". Apps may write their own. */
export function describeSessionChatStatus(status: SessionChatStatus): string {
  switch (status.type) {
    case 'ready':
      return 'Ready';
    case 'sending':
      return 'Sending…';
    case 'waking':
      return 'Agent waking up…';
    case 'resuming':
      return 'Resuming…';
    case 'streaming':
      return status.following ? 'Streaming (from another tab)' : 'Streaming';
    case 'waiting':
      return `Agent quiet for ${Math.floor(status.silentForMs / 1000)} s`;
    case 'reconnecting':
      return `Reconnecting in ${Math.ceil(status.retryInMs / 1000)} s`;
    case 'closed':
      return status.reason === null ? 'Closed' : `Closed: ${status.reason}`;
    case 'error':
      return `Error: ${status.error.message}`;
  }
}
