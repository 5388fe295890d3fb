import type { DevServer } from '../../../src/dev-server/index.js';
import type { SessionChatTransport } from '../../../src/transport/session-chat-transport.js';

/** One fault, armed on the server right before a turn is sent. */
export type Fault =
  | { kind: 'drop'; afterRecords: number; midFrame: boolean }
  | { kind: 'error-event'; afterRecords: number }
  | { kind: 'duplicates'; records: number; dropAfter: number }
  | { kind: 'append-500'; count: number }
  | { kind: 'append-429'; count: number; resetInMs: number }
  | { kind: 'lost-append-response' }
  | { kind: 'expire-tokens'; dropAfter: number }
  | { kind: 'revoke-token'; dropAfter: number }
  | { kind: 'tiny-writes'; bytes: number }
  | { kind: 'upgrade'; afterChunks: number }
  | { kind: 'hold-append' }
  | { kind: 'append-500-after-store' }
  | { kind: 'append-429-seconds'; count: number };

export function describeFault(fault: Fault): string {
  return JSON.stringify(fault);
}

/** Arms `fault` for the next turn. Faults disarm themselves once used (or at `reset`). */
export function armFault(
  server: DevServer,
  transport: SessionChatTransport,
  chatId: string,
  fault: Fault,
): void {
  const { faults } = server;
  switch (fault.kind) {
    case 'drop':
      faults.dropOutAfter(fault.afterRecords, { midFrame: fault.midFrame });
      return;
    case 'error-event':
      faults.sendOutError('stream store restarting', { afterRecords: fault.afterRecords });
      return;
    case 'duplicates':
      faults.dropOutAfter(fault.dropAfter);
      faults.duplicateReplay(fault.records);
      return;
    case 'append-500':
      faults.failAppends(fault.count, 500);
      return;
    case 'append-429':
      faults.failAppends(fault.count, 429, { resetInMs: fault.resetInMs });
      return;
    case 'lost-append-response':
      faults.loseAppendResponses(1);
      return;
    case 'expire-tokens':
      faults.expireTokens();
      faults.dropOutAfter(fault.dropAfter);
      return;
    case 'revoke-token': {
      const token = transport.getState(chatId).token;
      if (token !== undefined) faults.revokeToken(token);
      faults.dropOutAfter(fault.dropAfter);
      return;
    }
    case 'tiny-writes':
      faults.writeSseInPieces(fault.bytes);
      return;
    case 'upgrade':
      faults.upgradeMidTurn({ afterChunks: fault.afterChunks });
      return;
    case 'hold-append':
      faults.holdAppendResponses(1);
      return;
    case 'append-500-after-store':
      faults.failAppendsAfterStoring(1, 500);
      return;
    case 'append-429-seconds':
      faults.failAppends(fault.count, 429, { resetInMs: 1_000, resetFormat: 'delta-seconds' });
      return;
  }
}

/** A small, seedable PRNG (mulberry32): the same seed gives the same schedule. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Failures one logical append may meet and still succeed (default `maxAttempts` is 6). */
const MAX_FAILED_APPENDS = 5;

/**
 * Up to three random faults for one turn of about `records` records. Failed appends stay
 * within the default retry budget (6 attempts): beyond it, failing is the right answer,
 * which the client's own tests check.
 */
export function randomFaults(random: () => number, records: number): Fault[] {
  const pick = (n: number) => Math.floor(random() * n);
  const count = pick(4);
  const faults: Fault[] = [];
  // A lost append response costs an attempt too: the client sees a drop and retries.
  const failedAppends = () =>
    faults.reduce((sum, fault) => {
      if (fault.kind === 'append-500' || fault.kind === 'append-429') return sum + fault.count;
      return fault.kind === 'lost-append-response' || fault.kind === 'append-500-after-store' ? sum + 1 : sum;
    }, 0);
  for (let index = 0; index < count; index++) {
    const spare = MAX_FAILED_APPENDS - failedAppends();
    const kind = pick(12);
    if (spare < 1 && (kind === 3 || kind === 4 || kind === 5 || kind === 11)) {
      faults.push({ kind: 'drop', afterRecords: pick(records + 1), midFrame: random() < 0.5 });
      continue;
    }
    switch (kind) {
      case 0:
        faults.push({ kind: 'drop', afterRecords: pick(records + 1), midFrame: random() < 0.5 });
        break;
      case 1:
        faults.push({ kind: 'error-event', afterRecords: pick(records + 1) });
        break;
      case 2:
        faults.push({ kind: 'duplicates', records: 1 + pick(6), dropAfter: pick(records) });
        break;
      case 3:
        faults.push({ kind: 'append-500', count: 1 + pick(Math.min(3, spare)) });
        break;
      case 4:
        faults.push({ kind: 'append-429', count: 1 + pick(Math.min(2, spare)), resetInMs: pick(40) });
        break;
      case 5:
        faults.push({ kind: 'lost-append-response' });
        break;
      case 6:
        faults.push({ kind: 'expire-tokens', dropAfter: pick(records) });
        break;
      case 7:
        faults.push({ kind: 'revoke-token', dropAfter: pick(records) });
        break;
      case 8:
        faults.push({ kind: 'tiny-writes', bytes: 1 + pick(64) });
        break;
      case 9:
        faults.push({ kind: 'upgrade', afterChunks: 1 + pick(records - 4) });
        break;
      case 10:
        faults.push({ kind: 'hold-append' });
        break;
      default:
        faults.push({ kind: 'append-500-after-store' });
        break;
    }
  }
  return faults;
}
