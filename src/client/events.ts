import type { DurableChatError } from '../errors/durable-chat-error.js';
import type { TokenSource } from './token-manager.js';

/**
 * Telemetry, one object per event, every one tagged with its `chatId`. Never carries a
 * token. Handlers run synchronously on the hot path: keep them cheap, and they must not throw.
 */
export type SessionEvent =
  /** An append succeeded. `durationMs` spans every retry; `bytes` is the body size. */
  | {
      type: 'message-sent';
      chatId: string;
      kind: 'message' | 'stop' | 'action' | 'regenerate' | 'pending-message';
      durationMs: number;
      bytes: number;
      attempts: number;
      seq: number | undefined;
    }
  /** The first chunk of a turn reached the stream, `ms` after the send began. */
  | { type: 'first-chunk'; chatId: string; ms: number }
  /** The turn's own turn-complete arrived. `rejected`: it had no content (TURN_REJECTED). */
  | { type: 'turn-completed'; chatId: string; seqNum: number; rejected: boolean }
  /** A `.out` connection answered 200. `cursor` is the Last-Event-ID it resumed from. */
  | { type: 'stream-connected'; chatId: string; cursor: number | undefined }
  /** A `.out` connection was lost; the next attempt runs after `delayMs`. */
  | {
      type: 'stream-reconnecting';
      chatId: string;
      attempt: number;
      delayMs: number;
      reason: ReconnectReason;
    }
  /** After a reconnect, the first new record arrived `downtimeMs` after the drop. */
  | { type: 'stream-resumed'; chatId: string; cursor: number | undefined; downtimeMs: number }
  | { type: 'token-refreshed'; chatId: string; source: TokenSource }
  | { type: 'session-closed'; chatId: string; reason: string | null }
  /** The bookmark was trimmed: records after `cursor` up to `firstSeqNum - 1` are gone. */
  | { type: 'trimmed-cursor'; chatId: string; cursor: number; firstSeqNum: number }
  /**
   * The server no longer knew the chat's session (404: a restarted dev server, another
   * environment's or a deleted session): `startSession` made or found another, the cursor
   * was dropped, and the request that met the 404 was retried there (an append under the
   * same `X-Part-Id`).
   */
  | {
      type: 'session-replaced';
      chatId: string;
      previousSessionId: string | undefined;
      sessionId: string | undefined;
    }
  /** The agent's run was swapped for a new version; the stream continues. */
  | { type: 'upgrade-required'; chatId: string; seqNum: number }
  /** Something went wrong. `fatal: false` for problems that were recovered or skipped. */
  | { type: 'error'; chatId: string; error: DurableChatError; fatal: boolean };

/** Why a `.out` connection is being replaced. */
export type ReconnectReason = 'drop' | 'done' | 'error-event' | 'stall' | 'http' | 'network';

export type SessionEventHandler = (event: SessionEvent) => void;
