import type { SessionEvent } from '../client/events.js';
import type { InspectionNote } from '../client/inspection.js';
import type { RecordedExchange } from '../protocol/recording.js';
import type { ExchangeStep } from './chat-recorder.js';

/** One line of a chat's timeline. */
export interface TimelineEntry {
  /** Epoch ms. */
  at: number;
  /** What kind of step: the panel colours by it. */
  kind: 'append' | 'read' | 'turn' | 'token' | 'wait' | 'tab' | 'error' | 'status';
  text: string;
}

function ms(value: number): string {
  return value < 1_000 ? `${Math.round(value)} ms` : `${(value / 1_000).toFixed(1)} s`;
}

/** The kind of `.in` chunk an append body carries, read once per append (never per chunk). */
function appendKind(body: string | undefined): string {
  if (body === undefined) return 'append';
  try {
    const chunk = JSON.parse(body) as { kind?: unknown; payload?: { trigger?: unknown } };
    if (chunk.kind === 'stop') return 'stop';
    const trigger = chunk.payload?.trigger;
    if (trigger === 'action') return 'action';
    if (trigger === 'regenerate-message') return 'regenerate';
    return typeof trigger === 'string' ? `message (${trigger})` : 'message';
  } catch {
    return 'append';
  }
}

/** A timeline line for a request's step, or none for steps not worth a line. */
export function exchangeLine(
  exchange: RecordedExchange,
  step: ExchangeStep,
  startedAt: number,
  cursorNow: number | undefined,
): TimelineEntry | undefined {
  const { request } = exchange;
  if (exchange.kind === 'append') {
    const partId = request.headers['x-part-id'];
    const part = partId === undefined ? '' : `, part ${partId.slice(0, 8)}…`;
    if (step === 'sent') {
      const bytes = request.body === undefined ? 0 : new TextEncoder().encode(request.body).byteLength;
      return {
        at: startedAt + exchange.at,
        kind: 'append',
        text: `append ${appendKind(request.body)}: ${bytes} B${part}`,
      };
    }
    if (step === 'answered' && exchange.response !== undefined) {
      const { status, at } = exchange.response;
      const kind = status < 300 ? 'append' : 'error';
      return {
        at: startedAt + at,
        kind,
        text: `append answered ${status} after ${ms(at - exchange.at)}${part}`,
      };
    }
  } else if (exchange.kind === 'out') {
    const cursor = request.headers['last-event-id'];
    const peek = request.headers['x-peek-settled'] === '1' ? ', settled-peek' : '';
    if (step === 'sent') {
      const from = cursor === undefined ? 'the start' : `cursor ${cursor}`;
      return { at: startedAt + exchange.at, kind: 'read', text: `read .out from ${from}${peek}` };
    }
    if (step === 'answered' && exchange.response !== undefined && exchange.response.status >= 300) {
      const { status, at } = exchange.response;
      return { at: startedAt + at, kind: 'error', text: `read .out answered ${status}` };
    }
    if (step === 'ended' && exchange.response !== undefined) {
      const { end } = exchange.response;
      const start = cursor === undefined ? -1 : Number(cursor);
      const records = cursorNow === undefined ? 0 : Math.max(0, cursorNow - start);
      const how = {
        complete: 'ended by the server',
        dropped: 'dropped',
        aborted: 'closed by the client',
        open: 'open',
      }[end.type];
      return {
        at: startedAt + end.at,
        kind: end.type === 'dropped' ? 'error' : 'read',
        text: `read .out ${how}: up to seq ${cursorNow ?? '–'} (${records} record${records === 1 ? '' : 's'})`,
      };
    }
  }
  if (step === 'failed' && exchange.failure !== undefined) {
    const what = exchange.kind === 'out' ? 'read .out' : exchange.kind === 'append' ? 'append' : request.path;
    const why = exchange.failure.aborted ? 'given up by the client' : exchange.failure.message;
    return { at: startedAt + exchange.failure.at, kind: 'error', text: `${what} failed: ${why}` };
  }
  return undefined;
}

/** A timeline line for an event, or none (per-chunk events have no line). */
export function eventLine(event: SessionEvent, at: number): TimelineEntry | undefined {
  switch (event.type) {
    case 'message-sent': {
      const seq = event.seq === undefined ? '' : `, .in seq ${event.seq}`;
      const tries = event.attempts === 1 ? '' : ` in ${event.attempts} attempts`;
      return { at, kind: 'append', text: `${event.kind} stored${seq}${tries} (${ms(event.durationMs)})` };
    }
    case 'first-chunk':
      return { at, kind: 'turn', text: `first chunk after ${ms(event.ms)}` };
    case 'turn-completed':
      return {
        at,
        kind: event.rejected ? 'error' : 'turn',
        text: `turn-complete at seq ${event.seqNum}${event.rejected ? ' (rejected: no content)' : ''}`,
      };
    case 'stream-connected':
      return undefined;
    case 'stream-reconnecting':
      return {
        at,
        kind: 'wait',
        text: `reconnecting (${event.reason}), attempt ${event.attempt}, in ${ms(event.delayMs)}`,
      };
    case 'stream-resumed':
      return { at, kind: 'read', text: `resumed after ${ms(event.downtimeMs)} down` };
    case 'token-refreshed':
      return { at, kind: 'token', text: `token refreshed (${event.source})` };
    case 'session-closed':
      return { at, kind: 'error', text: `session closed${event.reason === null ? '' : `: ${event.reason}`}` };
    case 'trimmed-cursor':
      return {
        at,
        kind: 'wait',
        text: `cursor ${event.cursor} was trimmed: .out now starts at ${event.firstSeqNum}`,
      };
    case 'session-replaced':
      return {
        at,
        kind: 'error',
        text: `session replaced (404): ${event.previousSessionId ?? '–'} → ${event.sessionId ?? '–'}`,
      };
    case 'upgrade-required':
      return { at, kind: 'turn', text: `run upgraded at seq ${event.seqNum}` };
    case 'error':
      return {
        at,
        kind: 'error',
        text: `${event.fatal ? 'error' : 'recovered'}: ${event.error.code}: ${event.error.message}`,
      };
  }
}

/** A timeline line for a note. */
export function noteLine(note: InspectionNote, at: number): TimelineEntry | undefined {
  switch (note.type) {
    case 'session-started':
      return {
        at,
        kind: 'token',
        text: `startSession: ${note.sessionId ?? 'no id'}${note.isCached === false ? ' (new)' : ''}, run ${note.currentRunId ?? 'none'}`,
      };
    case 'command':
      return {
        at,
        kind: 'read',
        text:
          note.operation === 'trim'
            ? `trim at seq ${note.seqNum}: .out may drop the records before it`
            : `command ${note.operation} at seq ${note.seqNum}`,
      };
    case 'token-fetched':
      return { at, kind: 'token', text: 'getAccessToken answered' };
    case 'append-retrying':
      return {
        at,
        kind: 'wait',
        text: `append failed (${note.code}), attempt ${note.attempt}; retry in ${ms(note.delayMs)}`,
      };
    case 'liveness-check':
      return { at, kind: 'wait', text: `liveness check: run ${note.runId ?? 'none'} → ${note.verdict}` };
    case 'tab-state': {
      const part = note.owner ? 'owns the turn' : note.following ? 'follows another tab' : 'idle';
      return { at, kind: 'tab', text: `this tab ${part} (${note.mode})` };
    }
    case 'status-label':
      return { at, kind: 'status', text: `status: ${note.label}` };
  }
}
