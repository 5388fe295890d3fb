/**
 * What made a turn: this page's own append (`message`, `regenerate`, `action`), an action
 * stored while another turn was live (`queued`), or nothing this page appended (`found`: the
 * turn a record, another tab or another device says is live).
 */
export type TurnKind = 'message' | 'regenerate' | 'action' | 'queued' | 'found';

/** See the table on `TurnRecord`. */
export type TurnState = 'sent' | 'stored' | 'started' | 'read' | 'queued' | 'over' | 'stopped' | 'failed';

/** What happened to a turn: its append, its reply, its stop, or the chat's view of it. */
export type TurnEvent =
  | { type: 'answered'; seq: number | undefined }
  | { type: 'refused' }
  | { type: 'started' }
  | { type: 'read' }
  | { type: 'over' }
  | { type: 'stopped' }
  | { type: 'promoted'; startCursor: number | undefined; priorSeq: number | undefined };

/**
 * One turn of a chat's ledger, as it persists (the store's `turns`, the record's `turns`).
 * Everything the chat says about its live turn (`turnLive`, `turnStored`, `turnStartCursor`,
 * `turnInSeq`, `turnPriorInSeq`, `pendingAppend`, `stoppedTurn`, `queuedTurns`) is read from
 * these entries (`liveMark`), never written by hand.
 *
 * | state \ event | answered       | refused | started | read  | over | stopped | promoted |
 * |---------------|----------------|---------|---------|-------|------|---------|----------|
 * | sent          | stored (seq)   | failed  | started | read  | over | stopped | –        |
 * | stored        | – (seq)        | –       | started | read  | over | stopped | –        |
 * | started       | – (seq)        | –       | –       | read  | over | stopped | –        |
 * | read          | – (seq)        | –       | –       | –     | over | stopped | –        |
 * | queued        | – (seq)        | –       | –       | –     | –    | –       | stored   |
 * | over          | – (seq)        | –       | –       | –     | –    | –       | –        |
 * | stopped       | – (seq)        | –       | –       | –     | –    | –       | –        |
 * | failed        | – (seq)        | –       | –       | –     | –    | –       | –        |
 *
 * - Live states: `sent` (its append is out, unanswered), `stored`, `started` (its reply
 *   began), `read` (its turn-complete was read; live until its consumer has every chunk).
 * - `over`: done for this page (read to its end; or found ended: trimmed, settled, run gone,
 *   rejected, another session, another tab read it further, the chat closed). `stopped`: its
 *   stop is stored. `failed`: its append failed before anything of it showed.
 * - `answered` records the seq in every state (a reply may stream, even end, before its
 *   append is answered) and drops the saved body; `refused` drops it too.
 * - `queued`: an action stored while another turn was live; `promoted` once that one is over.
 */
export interface TurnRecord {
  /** Counts up per chat (kept across reloads): a stop or an answer names its turn by it. */
  readonly id: number;
  readonly kind: TurnKind;
  readonly state: TurnState;
  /** The append's `X-Part-Id`, when this page appended it. */
  readonly partId?: string;
  /** The append's `.in` seq, once answered. */
  readonly seq?: number;
  /** The highest `.in` seq answered before this turn's reply (every input up to it had its turn). */
  readonly priorSeq?: number;
  /** `.out` cursor the reply starts after: replaying from here rebuilds the turn. */
  readonly startCursor?: number;
  /**
   * The append's serialised body while it is unanswered: a reload sends it again under
   * `partId`, so the server stores it once whether or not the first attempt arrived.
   */
  readonly body?: string;
  /**
   * This page stopped the turn and never saw it end: its turn-complete (or a tool's late
   * output) may still come, and the next send skips it. `started`: its reply had begun.
   */
  readonly stopMark?: 'started' | 'unstarted';
}

/** The chat's live turn as its readers see it: every field read from the ledger's entries. */
export interface LiveMark {
  /** True while a turn this client started (or found) has not seen its end. */
  turnLive: boolean;
  /** The live turn's append was answered: a reload resumes it without a settled-peek. */
  turnStored: boolean;
  /** The turn this page stopped and never saw end (see `TurnRecord.stopMark`). */
  stoppedTurn: 'started' | 'unstarted' | undefined;
  /** The newest unanswered append (see `TurnRecord.body`). */
  pendingAppend: { partId: string; body: string } | undefined;
  /** `lastEventId` the live turn's reply starts after. */
  turnStartCursor: number | undefined;
  /** The `.in` seq of the input the live turn answers, once known. */
  turnInSeq: number | undefined;
  /** The highest `.in` seq answered before the live turn (see `TurnRecord.priorSeq`). */
  turnPriorInSeq: number | undefined;
  /** Actions waiting behind the live turn, by `.in` seq, oldest first. */
  queuedTurns: readonly (number | undefined)[];
}

export type LiveMarkKey = keyof LiveMark;

/** Entries kept besides the live and queued ones: enough for a stop's or an answer's late arrival. */
export const KEPT_TURNS = 8;
/**
 * Queued turns a chat keeps (and persists): more actions than this behind one live turn are a
 * runaway loop, not a user; the ones beyond it are not resumed.
 */
export const MAX_QUEUED_TURNS = 16;

const LIVE_STATES: ReadonlySet<TurnState> = new Set(['sent', 'stored', 'started', 'read']);

export function isLiveTurn(record: TurnRecord): boolean {
  return LIVE_STATES.has(record.state);
}

/** The live turn: the oldest entry still live (a send that went out behind it comes after it). */
export function liveTurn(turns: readonly TurnRecord[]): TurnRecord | undefined {
  return turns.find(isLiveTurn);
}

export const NO_LIVE_MARK: LiveMark = {
  turnLive: false,
  turnStored: false,
  stoppedTurn: undefined,
  pendingAppend: undefined,
  turnStartCursor: undefined,
  turnInSeq: undefined,
  turnPriorInSeq: undefined,
  queuedTurns: [],
};

/** Reads the chat's live mark from its ledger (the one place it comes from). */
export function liveMark(turns: readonly TurnRecord[]): LiveMark {
  if (turns.length === 0) return NO_LIVE_MARK;
  const live = liveTurn(turns);
  let pending: TurnRecord | undefined;
  let stopped: TurnRecord | undefined;
  const queued: (number | undefined)[] = [];
  for (const record of turns) {
    if (record.body !== undefined && record.partId !== undefined) pending = record;
    if (record.stopMark !== undefined) stopped = record;
    if (record.state === 'queued') queued.push(record.seq);
  }
  return {
    turnLive: live !== undefined,
    turnStored: live !== undefined && live.state !== 'sent',
    stoppedTurn: stopped?.stopMark,
    pendingAppend:
      pending === undefined ? undefined : { partId: pending.partId as string, body: pending.body as string },
    turnStartCursor: live?.startCursor,
    turnInSeq: live?.seq,
    turnPriorInSeq: live?.priorSeq,
    queuedTurns: queued.length === 0 ? NO_LIVE_MARK.queuedTurns : queued,
  };
}

/** The one transition function: see the table on `TurnRecord`. */
export function moveTurn(record: TurnRecord, event: TurnEvent): TurnRecord {
  const { state } = record;
  switch (event.type) {
    case 'answered': {
      const next: TurnRecord = { ...record, seq: event.seq, state: state === 'sent' ? 'stored' : state };
      return withoutBody(next);
    }
    case 'refused':
      return withoutBody(state === 'sent' ? { ...record, state: 'failed' } : record);
    case 'started':
      return state === 'sent' || state === 'stored' ? { ...record, state: 'started' } : record;
    case 'read':
      return isLiveTurn(record) ? { ...record, state: 'read' } : record;
    case 'over':
    case 'stopped':
      return isLiveTurn(record) ? { ...record, state: event.type } : record;
    case 'promoted':
      if (state !== 'queued') return record;
      return {
        ...record,
        state: 'stored',
        startCursor: event.startCursor,
        priorSeq:
          event.priorSeq === undefined || record.seq === undefined || event.priorSeq >= record.seq
            ? undefined
            : event.priorSeq,
      };
  }
}

function withoutBody(record: TurnRecord): TurnRecord {
  return record.body === undefined ? record : { ...record, body: undefined };
}

/**
 * Keeps the ledger bounded: every live and queued entry (queued ones up to
 * `MAX_QUEUED_TURNS`), and of the others the newest `KEPT_TURNS`.
 */
export function boundTurns(turns: readonly TurnRecord[]): readonly TurnRecord[] {
  let settled = 0;
  let queued = 0;
  for (const record of turns) {
    if (record.state === 'queued') queued++;
    else if (!isLiveTurn(record)) settled++;
  }
  if (settled <= KEPT_TURNS && queued <= MAX_QUEUED_TURNS) return turns;
  let dropSettled = settled - KEPT_TURNS;
  let keptQueued = 0;
  return turns.filter((record) => {
    if (record.state === 'queued') return ++keptQueued <= MAX_QUEUED_TURNS;
    if (isLiveTurn(record) || dropSettled <= 0) return true;
    dropSettled--;
    return false;
  });
}

/** The id the next entry gets. */
export function nextTurnId(turns: readonly TurnRecord[], floor = 0): number {
  let next = floor;
  for (const record of turns) if (record.id >= next) next = record.id + 1;
  return next;
}

/** Every live entry moved by `event` (the chat's live turn ends, however it ended). */
export function endLive(turns: readonly TurnRecord[], event: 'over' | 'stopped'): readonly TurnRecord[] {
  if (!turns.some(isLiveTurn)) return turns;
  return turns.map((record) => moveTurn(record, { type: event }));
}

/**
 * The live fields a record of the format before the ledger held (also written beside `turns`
 * for readers of that format: another tab still on an older build).
 */
export interface LegacyLiveFields {
  turnLive: boolean;
  /** The live turn's append was stored (absent in records written before it existed: false). */
  turnStored?: boolean;
  /** A turn this page stopped but never saw end (see `ChatSessionState.stoppedTurn`). */
  stoppedTurn?: 'started' | 'unstarted';
  /** The live turn's unanswered append (see `ChatSessionState.pendingAppend`). */
  pendingAppend?: { partId: string; body: string };
  turnStartCursor: number | undefined;
  /** See `ChatSessionState.turnInSeq` (absent in older records). */
  turnInSeq?: number;
  /** See `ChatSessionState.turnPriorInSeq` (absent in older records). */
  turnPriorInSeq?: number;
  /**
   * See `ChatSessionState.queuedTurns` (`null`: an input stored without a seq); absent when
   * nothing is queued, and in older records.
   */
  queuedTurns?: (number | null)[];
}

/**
 * The ledger a record of the format before it stands for (a page upgraded mid-turn): the
 * stopped turn, the live one (with its unanswered append), the actions queued behind it.
 */
export function turnsFromLegacy(fields: LegacyLiveFields): TurnRecord[] {
  const turns: TurnRecord[] = [];
  const pending = fields.pendingAppend;
  if (fields.stoppedTurn !== undefined)
    turns.push({ id: turns.length, kind: 'found', state: 'stopped', stopMark: fields.stoppedTurn });
  if (fields.turnLive) {
    const carriesPending = pending !== undefined && fields.turnStored !== true;
    turns.push({
      id: turns.length,
      kind: carriesPending ? 'message' : 'found',
      state: fields.turnStored === true ? 'stored' : 'sent',
      partId: carriesPending ? pending.partId : undefined,
      body: carriesPending ? pending.body : undefined,
      seq: fields.turnInSeq,
      priorSeq: fields.turnPriorInSeq,
      startCursor: fields.turnStartCursor,
    });
    // A send that went out behind the live turn, still unanswered: it is live after it.
    if (pending !== undefined && !carriesPending)
      turns.push({
        id: turns.length,
        kind: 'message',
        state: 'sent',
        partId: pending.partId,
        body: pending.body,
      });
  }
  for (const seq of (fields.queuedTurns ?? []).slice(0, MAX_QUEUED_TURNS))
    turns.push({ id: turns.length, kind: 'queued', state: 'queued', seq: seq ?? undefined });
  return turns;
}
