import { endLiveTurn, foundLiveTurn } from '../client/live-turn.js';
import type { PersistedChatRecord } from '../client/persistence.js';
import type { SessionClient } from '../client/session-client.js';
import type { ChatSessionState } from '../client/session-store.js';
import { liveTurn } from '../client/turn-records.js';
import { readTokenClaims } from '../protocol/token-claims.js';

/** `newer` expires later than `current` (a token without `exp` never wins over one with it). */
function expiresLater(newer: string, current: string | undefined): boolean {
  if (current === undefined) return true;
  const next = readTokenClaims(newer)?.exp;
  const now = readTokenClaims(current)?.exp;
  return next !== undefined && (now === undefined || next > now);
}

/**
 * Merges a record another tab wrote into this tab's store: the token that lives longer,
 * the furthest cursor, the live-turn flag when the record is at least as far along, and
 * the closed flag (terminal). Returns true when the record says a turn is live that this
 * tab did not know about (the caller may follow it).
 */
export function adoptPersistedRecord(client: SessionClient, record: PersistedChatRecord): boolean {
  const state = client.getState();
  if (record.closed && !state.closed) {
    client.markClosed(record.closedReason);
    return false;
  }
  if (state.closed) return false;
  if (record.publicAccessToken !== undefined && record.publicAccessToken !== state.token) {
    if (expiresLater(record.publicAccessToken, state.token))
      client.tokens.adopt(record.publicAccessToken, 'manual');
  }
  const patch: Partial<ChatSessionState> = {};
  if (state.sessionId === undefined && record.sessionId !== undefined) patch.sessionId = record.sessionId;
  const local = state.lastEventId;
  const remote = record.lastEventId;
  const atLeastAsFar = remote !== undefined && (local === undefined || remote >= local);
  if (atLeastAsFar && remote !== local) patch.lastEventId = remote;
  // A send its page noted as it left, unanswered (see `SessionChatTransport.noteIfLeaving`), is
  // news however little of `.out` that page had read (this tab read past it: a turn it stopped
  // there, a trailing record). It is told from an old turn by its part id: a turn this tab
  // followed or sent keeps it in its ledger.
  const live = liveTurn(record.turns ?? []);
  const partId = live?.state === 'sent' && live.body !== undefined ? live.partId : undefined;
  const noted = partId !== undefined && !state.turns.some((turn) => turn.partId === partId);
  const startsTurn = record.turnLive && !state.turnLive && (atLeastAsFar || local === undefined || noted);
  // The live turn's message (another tab's newer turn may have replaced it while this one was live).
  if (record.turnLive && (startsTurn || atLeastAsFar) && record.turnMessage !== state.turnMessage)
    patch.turnMessage = record.turnMessage;
  if (Object.keys(patch).length > 0) client.store.setState(patch);
  if (startsTurn) {
    // Found live in this tab's ledger (the record's live entry, read into the fields beside it),
    // told by the input it answers as the other tab tells it.
    foundLiveTurn(client.store, {
      // Not sent yet: its reply comes after all this tab has read.
      startCursor: atLeastAsFar || local === undefined ? record.turnStartCursor : local,
      partId: live?.partId,
      stored: false,
      seq: record.turnInSeq,
      priorSeq: record.turnPriorInSeq,
    });
  } else if (!record.turnLive && state.turnLive && atLeastAsFar && remote !== local) {
    // The other tab read the turn to its end further than we did.
    endLiveTurn(client.store);
  }
  return startsTurn;
}
