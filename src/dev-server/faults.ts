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
  /** Go silent once this many records were sent: no record, ping or `[DONE]`; the socket stays open. */
  stallAfterRecords?: number;
  /** Never answer: no status, no headers, until the client gives up or the server closes. */
  hang?: boolean;
  /** Answer this status instead of the stream (409: as for a closed session, with its code). */
  status?: number;
  /** With `status`: its `Retry-After`, in seconds. */
  retryAfterSeconds?: number | undefined;
}

/**
 * How a 429's `x-ratelimit-reset` is written: epoch milliseconds (the production service),
 * or what other servers send: epoch seconds, or seconds from now.
 */
export type RateLimitResetFormat = 'epoch-ms' | 'epoch-seconds' | 'delta-seconds';

export interface AppendFault {
  /**
   * `status`: answered with `status`, nothing stored. `lose-response`: stored, then the
   * connection drops. `status-after-store`: stored, then answered with `status`.
   * `hold`: stored, answered once the turn that answers it has completed on `.out`.
   * `hang`: never answered (stored first when `store`).
   */
  kind: 'status' | 'lose-response' | 'status-after-store' | 'hold' | 'hang';
  status: number;
  resetInMs: number;
  limit: number;
  resetFormat: RateLimitResetFormat;
  /** A 5xx's `Retry-After`, in seconds; none when undefined. */
  retryAfterSeconds: number | undefined;
  store: boolean;
}

export interface TurnFault {
  kind: 'crash' | 'upgrade' | 'close';
  afterChunks: number;
  sessionId: string | undefined;
  /** `upgrade`: the new run answers with different text and text part ids, as a real model would. */
  differentAnswer: boolean;
  /** `close`: the session's `closedReason`. */
  reason: string | null;
}

/** What the append answer and the turn-complete records carry beyond the spec (wire notes). */
export interface WireOptions {
  /** `seq` in the append's success body. Default true. */
  appendSeq: boolean;
  /** `session-in-event-id` on turn-complete records. Default true. */
  sessionInEventId: boolean;
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
  /** Read per append and per turn-complete, so the mode can change on a live server. */
  readonly wire: WireOptions;

  constructor(
    private readonly tokens: TokenService,
    private readonly trim: { delayMs: number },
    private readonly configuredWire: Readonly<WireOptions> = { appendSeq: true, sessionInEventId: true },
  ) {
    this.wire = { ...configuredWire };
  }

  /**
   * A server that leaves out what the spec does not promise: no `seq` in append answers and
   * no `session-in-event-id` on turn-complete records (`false` puts both back). `reset()`
   * returns to the server's `wire` option.
   */
  omitTurnCorrelation(omit = true): void {
    this.wire.appendSeq = !omit;
    this.wire.sessionInEventId = !omit;
  }

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

  /** `.out` streams go silent after `records` records: no record, ping or `[DONE]`, socket open. */
  stallOutAfter(records: number, options: { connections?: number } = {}): void {
    this.outPlans.push({ plan: { stallAfterRecords: records }, remaining: options.connections ?? 1 });
  }

  /**
   * The next `connections` `.out` requests answer `status` instead of a stream (e.g. 500, or
   * 409 with `code: 'session_closed'` as a server that refuses reads of a closed session would),
   * with `Retry-After: retryAfterSeconds` when that is given.
   */
  failOutConnections(connections = 1, status = 500, options: { retryAfterSeconds?: number } = {}): void {
    this.outPlans.push({
      plan: { status, retryAfterSeconds: options.retryAfterSeconds },
      remaining: connections,
    });
  }

  /** The next `.out` requests are never answered (no headers), as over a half-open connection. */
  hangOutConnections(connections = 1): void {
    this.outPlans.push({ plan: { hang: true }, remaining: connections });
  }

  /**
   * The next `count` appends fail with `status` and store nothing: a 4xx as given (a refusal,
   * final for a client), 502-504 as given, any other status as 500. A 429 carries
   * `x-ratelimit-limit`, `x-ratelimit-remaining: 0` and `x-ratelimit-reset`, `resetInMs`
   * away, written as `resetFormat` (default epoch ms; `epoch-seconds` and `delta-seconds`
   * are rounded up). A 5xx carries `Retry-After: retryAfterSeconds` when that is given.
   */
  failAppends(
    count: number,
    status = 500,
    options: {
      resetInMs?: number;
      limit?: number;
      resetFormat?: RateLimitResetFormat;
      retryAfterSeconds?: number;
    } = {},
  ): void {
    const plan = appendFault('status', status);
    plan.resetInMs = options.resetInMs ?? 1000;
    plan.limit = options.limit ?? 60;
    plan.resetFormat = options.resetFormat ?? 'epoch-ms';
    plan.retryAfterSeconds = options.retryAfterSeconds;
    this.appendFaults.push({ plan, remaining: count });
  }

  /** The next `count` appends are stored (and answered by the agent), then fail with `status`. */
  failAppendsAfterStoring(count = 1, status = 500): void {
    this.appendFaults.push({ plan: appendFault('status-after-store', status), remaining: count });
  }

  /** The next `count` appends are stored, then the connection drops before the response. */
  loseAppendResponses(count = 1): void {
    this.appendFaults.push({ plan: appendFault('lose-response', 0), remaining: count });
  }

  /**
   * The next `count` appends are stored, and answered only once the agent has written the
   * whole turn that answers them (turn-complete included) to `.out`, or the run is gone,
   * or the session closed.
   */
  holdAppendResponses(count = 1): void {
    this.appendFaults.push({ plan: appendFault('hold', 0), remaining: count });
  }

  /** The next `count` appends are never answered; with `store: true` they are stored first. */
  hangAppends(count = 1, options: { store?: boolean } = {}): void {
    const plan = appendFault('hang', 0);
    plan.store = options.store ?? false;
    this.appendFaults.push({ plan, remaining: count });
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

  /**
   * The next turn (of `sessionId` or externalId, or any) writes `upgrade-required` after
   * `afterChunks` chunks and a new run answers it again: the same answer, or with
   * `differentAnswer` other text under other text part ids (and, as always, a new message id).
   */
  upgradeMidTurn(
    options: { afterChunks?: number; sessionId?: string; differentAnswer?: boolean } = {},
  ): void {
    const plan = turnFault('upgrade', options);
    plan.differentAnswer = options.differentAnswer ?? false;
    this.turnFaults.push({ plan, remaining: 1 });
  }

  /**
   * The next turn (of `sessionId` or externalId, or any) crashes its run after `afterChunks`
   * chunks (`0`: before its first): no turn-complete, `currentRunId` null at once.
   */
  crashMidTurn(options: { afterChunks?: number; sessionId?: string } = {}): void {
    this.turnFaults.push({ plan: turnFault('crash', options), remaining: 1 });
  }

  /**
   * The next turn (of `sessionId` or externalId, or any) is cut after `afterChunks` chunks by
   * a close of its session on the server, as `POST …/close` would: the run ends, nothing more
   * is written to `.out`, later appends and creates answer 409.
   */
  closeMidTurn(options: { afterChunks?: number; sessionId?: string; reason?: string } = {}): void {
    const plan = turnFault('close', options);
    plan.reason = options.reason ?? 'closed by the server';
    this.turnFaults.push({ plan, remaining: 1 });
  }

  /** Disarms every fault, restores whole SSE frames and the `wire` option (the trim delay stays). */
  reset(): void {
    this.outPlans = [];
    this.appendFaults = [];
    this.turnFaults = [];
    this.sseChunkBytes = null;
    Object.assign(this.wire, this.configuredWire);
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

function appendFault(kind: AppendFault['kind'], status: number): AppendFault {
  return {
    kind,
    status,
    resetInMs: 0,
    limit: 0,
    resetFormat: 'epoch-ms',
    retryAfterSeconds: undefined,
    store: true,
  };
}

function turnFault(
  kind: TurnFault['kind'],
  options: { afterChunks?: number; sessionId?: string },
): TurnFault {
  return {
    kind,
    afterChunks: options.afterChunks ?? 3,
    sessionId: options.sessionId,
    differentAnswer: false,
    reason: null,
  };
}

function take<T>(queue: Armed<T>[], matches: (plan: T) => boolean): T | undefined {
  const index = queue.findIndex((entry) => matches(entry.plan));
  const entry = queue[index];
  if (entry === undefined) return undefined;
  entry.remaining -= 1;
  if (entry.remaining <= 0) queue.splice(index, 1);
  return entry.plan;
}
