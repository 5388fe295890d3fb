import type { SessionEvent } from 'durable-chat';

/** One line of the event log per transport event. Events never carry tokens. */
export function describeEvent(event: SessionEvent): string {
  switch (event.type) {
    case 'message-sent':
      return `${event.kind}, ${event.bytes} B in ${Math.round(event.durationMs)} ms${event.attempts > 1 ? ` (${event.attempts} attempts)` : ''}`;
    case 'first-chunk':
      return `${Math.round(event.ms)} ms after the send`;
    case 'turn-completed':
      return event.rejected ? `seq ${event.seqNum}, rejected (no content)` : `seq ${event.seqNum}`;
    case 'stream-connected':
      return event.cursor === undefined ? 'from the start' : `from seq ${event.cursor}`;
    case 'stream-reconnecting':
      return `attempt ${event.attempt} in ${Math.round(event.delayMs)} ms (${event.reason})`;
    case 'stream-resumed':
      return `after ${Math.round(event.downtimeMs)} ms down`;
    case 'token-refreshed':
      return `via ${event.source}`;
    case 'session-closed':
      return event.reason ?? '';
    case 'trimmed-cursor':
      return `cursor ${event.cursor} trimmed, resumed at ${event.firstSeqNum}`;
    case 'session-replaced':
      return `the server no longer knew ${event.previousSessionId ?? 'the session'}; now ${event.sessionId ?? 'a new one'}`;
    case 'upgrade-required':
      return `seq ${event.seqNum}`;
    case 'error':
      return `${event.error.code}${event.fatal ? '' : ' (recovered)'}: ${event.error.message}`;
  }
}
