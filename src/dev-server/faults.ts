import type { TokenService } from './tokens.js';

/** Fault plan for one `.out` connection, taken when it opens. */
export interface OutConnectionPlan {
  /** Close abruptly (no `[DONE]`) once this many records were sent. */
  dropAfterRecords?: number;
  /** With `dropAfterRecords`: cut the connection in the middle of the next frame. */
  midFrame?: boolean;
  /** Send an `error` event (then close without `[DONE]`) once this many records were sent. */
  error?: { message: string; afterRecords: number };
  /** The first batch repeats this many already-delivered records before the cursor. */
  duplicateRecords?: number;
}

export interface AppendFault {
  kind: 'status' | 'lose-response';
  status: number;
  resetInMs: number;
  limit: number;
}

export interface TurnFault {
  kind: 'crash' | 'upgrade';
  afterChunks: number;
  sessionId: string | undefined;
}

interface Armed<T> {
  plan: T;
  remaining: number;
}

/**
 * Fault injection. Every fault is armed for a number of future events (connections,
 * appends, turns) and then disarms itself, so tests stay deterministic.
 */
export class Faults {
  private outPlans: Armed<OutConnectionPlan>[] = [];
  private appendFaults: Armed<AppendFault>[] = [];
  private turnFaults: Armed<TurnFault>[] = [];
  /** Every SSE frame is written in pieces of this many bytes (null: whole frames). */
  sseChunkBytes: number | null = null;

  constructor(
    private readonly tokens: TokenService,
    private readonly trim: { delayMs: number },
  ) {}

  /** The next `connections` `.out` streams close abruptly after `records` records. */
  dropOutAfter(records: number, options: { midFrame?: boolean; connections?: number } = {}): void {
    const plan: OutConnectionPlan = { dropAfterRecords: records, midFrame: options.midFrame ?? false };
    this.outPlans.push({ plan, remaining: options.connections ?? 1 });
  }

  /** The next `.out` streams send `event: error` after `afterRecords` records, then close. */
  sendOutError(
    message = 'stream store restarting',
    options: { afterRecords?: number; connections?: number } = {},
  ): void {
    const plan: OutConnectionPlan = { error: { message, afterRecords: options.afterRecords ?? 0 } };
    this.outPlans.push({ plan, remaining: options.connections ?? 1 });
  }

  /** The next `.out` streams start by replaying `records` records the reader already has. */
  duplicateReplay(records: number, options: { connections?: number } = {}): void {
    this.outPlans.push({ plan: { duplicateRecords: records }, remaining: options.connections ?? 1 });
  }

  /** Writes every SSE frame in pieces of `bytes` bytes (null restores whole frames). */
  writeSseInPieces(bytes: number | null): void {
    this.sseChunkBytes = bytes;
  }

  /** The next `count` appends fail with `status` (429 carries `x-ratelimit-*`; reset is epoch ms). */
  failAppends(count: number, status = 500, options: { resetInMs?: number; limit?: number } = {}): void {
    const plan: AppendFault = {
      kind: 'status',
      status,
      resetInMs: options.resetInMs ?? 1000,
      limit: options.limit ?? 60,
    };
    this.appendFaults.push({ plan, remaining: count });
  }

  /** The next `count` appends are stored, then the connection drops before the response. */
  loseAppendResponses(count = 1): void {
    this.appendFaults.push({
      plan: { kind: 'lose-response', status: 0, resetInMs: 0, limit: 0 },
      remaining: count,
    });
  }

  /** Every token minted so far is refused from now on (401), as if expired. */
  expireTokens(): void {
    this.tokens.expireAll();
  }

  /** This one token is refused from now on (401). */
  revokeToken(token: string): void {
    this.tokens.revoke(token);
  }

  /** Changes the delay before a turn's trim takes effect (applies to trims scheduled later). */
  setTrimDelay(ms: number): void {
    this.trim.delayMs = ms;
  }

  /** The next turn (of `sessionId` or externalId, or any) writes `upgrade-required` after `afterChunks` chunks. */
  upgradeMidTurn(options: { afterChunks?: number; sessionId?: string } = {}): void {
    const plan: TurnFault = {
      kind: 'upgrade',
      afterChunks: options.afterChunks ?? 3,
      sessionId: options.sessionId,
    };
    this.turnFaults.push({ plan, remaining: 1 });
  }

  /** The next turn (of `sessionId` or externalId, or any) crashes its run after `afterChunks` chunks. */
  crashMidTurn(options: { afterChunks?: number; sessionId?: string } = {}): void {
    const plan: TurnFault = {
      kind: 'crash',
      afterChunks: options.afterChunks ?? 3,
      sessionId: options.sessionId,
    };
    this.turnFaults.push({ plan, remaining: 1 });
  }

  /** Disarms every fault and restores whole SSE frames (the trim delay is left as set). */
  reset(): void {
    this.outPlans = [];
    this.appendFaults = [];
    this.turnFaults = [];
    this.sseChunkBytes = null;
  }

  /** @internal Called by the `.out` route when a connection opens. */
  takeOutPlan(): OutConnectionPlan {
    return take(this.outPlans, () => true) ?? {};
  }

  /** @internal Called by the append route for every request. */
  takeAppendFault(): AppendFault | undefined {
    return take(this.appendFaults, () => true);
  }

  /** @internal Called by a run when a turn starts. */
  takeTurnFault(names: readonly (string | null)[]): TurnFault | undefined {
    return take(this.turnFaults, (plan) => plan.sessionId === undefined || names.includes(plan.sessionId));
  }
}

function take<T>(queue: Armed<T>[], matches: (plan: T) => boolean): T | undefined {
  const index = queue.findIndex((entry) => matches(entry.plan));
  const entry = queue[index];
  if (entry === undefined) return undefined;
  entry.remaining -= 1;
  if (entry.remaining <= 0) queue.splice(index, 1);
  return entry.plan;
}
