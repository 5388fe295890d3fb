import { endLiveTurn, markStoppedTurn, writeTurns } from '../client/live-turn.js';
import type { SessionStore } from '../client/session-store.js';
import {
  endLive,
  isLiveTurn,
  liveTurn,
  MAX_QUEUED_TURNS,
  moveTurn,
  nextTurnId,
  type TurnEvent,
  type TurnKind,
  type TurnRecord,
  type TurnState,
} from '../client/turn-records.js';

/** How an append ended, for a resumed turn waiting for its seq. */
export type AppendAnswer = { ok: true; seq: number | undefined } | { ok: false; error: unknown };

export type { TurnEvent as TurnEntryEvent, TurnKind as TurnEntryKind, TurnState as TurnEntryState };

/**
 * One turn of the ledger as this page handles it: its persisted entry (`TurnRecord`, in the
 * store, read through `record`) and what only this page holds (its append's answer, its stop).
 */
export class TurnEntry {
  /** The append's answer, when the turn took the chat's live mark as it went out. */
  readonly answer: Promise<AppendAnswer> | undefined;
  /** The stop appended for this turn while it is on its way: a second request is the same stop. */
  stop: Promise<void> | undefined;
  /**
   * Set when the user's abort of this send stopped it: the `.in` seq known before its append.
   * A refusal of the append, or a stop stored right after that seq, shows it was never stored.
   */
  stoppedBefore: { inSeq: number | undefined } | undefined;
  readonly id: number;
  readonly kind: TurnKind;
  readonly partId: string | undefined;
  #last: TurnRecord;

  readonly #store: SessionStore;

  constructor(store: SessionStore, record: TurnRecord, answer: Promise<AppendAnswer> | undefined) {
    this.#store = store;
    // Without its body (the append's, the user's whole message): the ledger drops that once the
    // append is answered, and this fallback would keep it for as long as the entry lives.
    this.#last = record.body === undefined ? record : { ...record, body: undefined };
    this.answer = answer;
    this.id = record.id;
    this.kind = record.kind;
    this.partId = record.partId;
  }

  /** The persisted entry (the last one seen, once the bounded ledger has dropped it). */
  get record(): TurnRecord {
    const found = this.#store.getState().turns.find((record) => record.id === this.id);
    if (found !== undefined) this.#last = found;
    return this.#last;
  }

  get state(): TurnState {
    return this.record.state;
  }

  get seq(): number | undefined {
    return this.record.seq;
  }
}

/**
 * What settles an entry's `answer`, until its append is answered. One table for every chat's
 * ledger (its keys are each ledger's own entries): a table per chat is 140 bytes more a chat.
 */
const SETTLERS = new WeakMap<TurnEntry, (answer: AppendAnswer) => void>();

/**
 * A chat's turn ledger: its entries (`TurnRecord`, see the transition table there) live in the
 * chat's store, bounded (the live and queued turns and the few before them), and persist with
 * its record, so a reload restores sends, stops and queued actions. The chat's live mark
 * (`turnLive`, `turnStored`, `turnStartCursor`, `turnInSeq`, `turnPriorInSeq`,
 * `pendingAppend`, `stoppedTurn`, `queuedTurns`) is read from them, never written by hand.
 * The current entry is the turn that went live last on this page (or was restored); a stop,
 * an append's answer and a resume belong to the entry that was current when they were asked
 * for, so a late acknowledgement never ends a newer turn.
 *
 * Transitions that move more than one entry:
 * - `goLive`: a send or an action takes the mark; a live turn whose stop is on its way is
 *   `stopped` for this page.
 * - `stopStored` of the current entry: every live entry is `stopped`.
 * - `over` (a turn read to its own turn-complete, every chunk taken): that entry and every one
 *   before it are `over`; the first live entry after it (a send that went out behind it) starts
 *   after its end; with none, the first queued action is `promoted`.
 * - Writers that hold only the store (a turn stream finding its turn long over, the React
 *   hooks, another tab's record) use `client/live-turn.ts`: `endLiveTurn`, `foundLiveTurn`,
 *   `updateLiveTurn`, `markStoppedTurn`.
 */
export class TurnLedger {
  readonly #handles = new Map<number, TurnEntry>();
  /** Ids this page gave out (a bounded ledger may have dropped the entry with the highest). */
  #issued = 0;
  /** Stands for "no turn yet": nothing to stop, nothing to wait for. */
  readonly #none: TurnEntry;

  readonly #store: SessionStore;

  constructor(store: SessionStore) {
    this.#store = store;
    this.#none = new TurnEntry(store, { id: -1, kind: 'found', state: 'over' }, undefined);
  }

  /** The turn that went live last (restored from the record, or on this page). */
  get current(): TurnEntry {
    const { turns } = this.#store.getState();
    for (let index = turns.length - 1; index >= 0; index--) {
      const record = turns[index] as TurnRecord;
      if (record.state !== 'queued') return this.#handle(record);
    }
    return this.#none;
  }

  /** A stop for the current turn is on its way. */
  get stopping(): boolean {
    return this.current.stop !== undefined;
  }

  /** The entry with `id`, when the ledger still holds it. */
  entry(id: number): TurnEntry | undefined {
    const record = this.#store.getState().turns.find((candidate) => candidate.id === id);
    return record === undefined ? undefined : this.#handle(record);
  }

  /**
   * A turn goes out (`sent`) or is found (`stored`), or an action waits behind the live turn
   * (`queued`). `awaited`: it takes the chat's live mark, so a resume meanwhile waits for its
   * answer. `body`: its append, sent again after a reload while unanswered.
   */
  open(
    kind: TurnKind,
    options: {
      partId?: string;
      seq?: number;
      awaited?: boolean;
      body?: string;
      startCursor?: number;
      priorSeq?: number;
      state?: TurnState;
    } = {},
  ): TurnEntry {
    const { turns } = this.#store.getState();
    const id = nextTurnId(turns, this.#issued);
    this.#issued = id + 1;
    const state: TurnState =
      options.state ?? (kind === 'found' ? 'stored' : kind === 'queued' ? 'queued' : 'sent');
    const record = {
      id,
      kind,
      state,
      partId: options.partId,
      seq: options.seq,
      priorSeq: options.priorSeq,
      startCursor: options.startCursor,
      body: options.body,
    };
    let settle: ((answer: AppendAnswer) => void) | undefined;
    const answer =
      options.awaited === true
        ? new Promise<AppendAnswer>((resolve) => {
            settle = resolve;
          })
        : undefined;
    const entry = new TurnEntry(this.#store, record, answer);
    if (settle !== undefined) SETTLERS.set(entry, settle);
    this.#handles.set(id, entry);
    writeTurns(this.#store, [...turns, record]);
    this.#forgetDropped();
    return entry;
  }

  /**
   * A send or an action goes out and takes the chat's live mark: its turn starts after
   * `startCursor`, every input up to `priorSeq` was answered before it (when known). A reload
   * or a resume meanwhile knows it is live.
   */
  goLive(
    kind: 'message' | 'regenerate' | 'action',
    mark: { partId?: string; startCursor: number | undefined; priorSeq: number | undefined; body?: string },
  ): TurnEntry {
    // A live turn here is one whose stop is on its way: this send is the live one now.
    writeTurns(this.#store, endLive(this.#store.getState().turns, 'stopped'));
    return this.open(kind, { ...mark, awaited: true });
  }

  /**
   * The append of `entry` was answered with `seq`. Sent behind a live turn whose own append
   * this page never saw answered: `.in` holds an input after that turn's, so its reply comes
   * (a resume of it does not peek).
   */
  stored(entry: TurnEntry, seq: number | undefined): void {
    this.answer(entry, { ok: true, seq });
    const live = liveTurn(this.#store.getState().turns);
    if (live !== undefined && live.id < entry.id && live.state === 'sent') {
      const earlier = this.entry(live.id);
      if (earlier !== undefined) this.move(earlier, { type: 'answered', seq: live.seq });
    }
  }

  /**
   * The append of `entry` failed (after its retries): nothing of it showed (`started` false),
   * so it is not live after all (`refused`); what showed keeps it live, bounded by its watch.
   */
  notStored(entry: TurnEntry, error: unknown, started: boolean): void {
    this.answer(entry, { ok: false, error });
    if (started) this.move(entry, { type: 'started' });
    if (this.#store.getState().closed) return;
    this.move(entry, { type: 'refused' });
  }

  /** The stop appended for `entry` is stored: while it is current, the chat is not live. */
  stopStored(entry: TurnEntry): void {
    this.move(entry, { type: 'stopped' });
    if (this.isCurrent(entry) && !this.#store.getState().closed) endLiveTurn(this.#store, 'stopped');
  }

  /** The entry is still the one live on this page (no newer turn went live since). */
  isCurrent(entry: TurnEntry): boolean {
    return this.current === entry;
  }

  /** The append of `entry` was answered, or failed: a resume waiting for it goes on. */
  answer(entry: TurnEntry, answer: AppendAnswer): void {
    if (answer.ok) this.move(entry, { type: 'answered', seq: answer.seq });
    SETTLERS.get(entry)?.(answer);
    SETTLERS.delete(entry);
  }

  /** Moves `entry` by `event` (see the table on `TurnRecord`). */
  move(entry: TurnEntry, event: TurnEvent): void {
    const { turns } = this.#store.getState();
    const index = turns.findIndex((record) => record.id === entry.id);
    if (index < 0) return;
    const before = turns[index] as TurnRecord;
    const after = moveTurn(before, event);
    if (after === before) return;
    writeTurns(
      this.#store,
      turns.map((record, at) => (at === index ? after : record)),
    );
  }

  /**
   * An action stored while another turn was live: its output is a turn after that one. Live at
   * once when that turn is over already (read from the cursor, told by its seq), else when it
   * ends (`promote`).
   */
  queue(seq: number | undefined): void {
    const { closed, turns, lastEventId } = this.#store.getState();
    if (closed) return;
    if (!turns.some(isLiveTurn)) {
      this.open('queued', { seq, state: 'stored', startCursor: lastEventId });
      return;
    }
    if (turns.filter((record) => record.state === 'queued').length < MAX_QUEUED_TURNS)
      this.open('queued', { seq });
  }

  /**
   * A turn read to its own turn-complete (at `endCursor`, having consumed `.in` up to
   * `consumedSeq`) is over for this page, its consumer has every chunk, and so is every turn
   * that went live before it (`owner`: the entry it read; without one, every live turn). A send
   * that went out behind it is the live turn now, its reply after this one's end; else an
   * action queued behind it goes live (`promote`).
   */
  over(endCursor: number | undefined, consumedSeq: number | undefined, owner?: TurnEntry): void {
    if (owner === undefined) endLiveTurn(this.#store, 'over');
    else writeTurns(this.#store, overThrough(this.#store.getState().turns, owner.id, endCursor, consumedSeq));
    this.promote(endCursor, consumedSeq);
  }

  /**
   * The live turn is over (its turn-complete at `endCursor`, having consumed `.in` up to
   * `consumedSeq`): the next queued action's turn is the live one now.
   */
  promote(endCursor: number | undefined, consumedSeq: number | undefined): void {
    const { turns } = this.#store.getState();
    if (turns.some(isLiveTurn)) return;
    const index = turns.findIndex((record) => record.state === 'queued');
    if (index < 0) return;
    const promoted = moveTurn(turns[index] as TurnRecord, {
      type: 'promoted',
      startCursor: endCursor,
      priorSeq: consumedSeq,
    });
    writeTurns(
      this.#store,
      turns.map((record, at) => (at === index ? promoted : record)),
    );
  }

  /** Nothing queued is resumed: the user stopped, or a send reads past those turns. */
  clearQueue(): void {
    const { turns } = this.#store.getState();
    if (turns.some((record) => record.state === 'queued'))
      writeTurns(
        this.#store,
        turns.filter((record) => record.state !== 'queued'),
      );
  }

  /**
   * This page stopped the current turn and never saw it end: once the stop is stored the chat
   * is no longer live, but that turn's turn-complete (or a tool's late output) may still be on
   * its way. The next send skips it (`started`: the turn was open at the cursor; `unstarted`:
   * its reply had not begun). On the entry, so it persists. `undefined` clears it.
   */
  markStopped(mark: 'started' | 'unstarted' | undefined): void {
    markStoppedTurn(this.#store, mark);
  }

  /** The send whose abort marked a turn stopped, while that mark may still prove wrong. */
  stoppedSend(): TurnEntry | undefined {
    let found: TurnEntry | undefined;
    for (const entry of this.#handles.values()) if (entry.stoppedBefore !== undefined) found = entry;
    return found;
  }

  /** Forgets every send's stopped mark (a newer send, or the mark proved wrong). */
  clearStoppedSends(): void {
    for (const entry of this.#handles.values()) entry.stoppedBefore = undefined;
  }

  #handle(record: TurnRecord): TurnEntry {
    let entry = this.#handles.get(record.id);
    if (entry === undefined) {
      entry = new TurnEntry(this.#store, record, undefined);
      this.#handles.set(record.id, entry);
    }
    return entry;
  }

  /** Handles of entries the bounded ledger dropped (a late answer still reaches its own). */
  #forgetDropped(): void {
    if (this.#handles.size <= 32) return;
    const kept = new Set(this.#store.getState().turns.map((record) => record.id));
    for (const [id, entry] of this.#handles)
      if (!kept.has(id) && !SETTLERS.has(entry) && entry.stop === undefined) this.#handles.delete(id);
  }
}

/** `over` of the entry `ownerId` and every one before it; the next live one starts after `endCursor`. */
function overThrough(
  turns: readonly TurnRecord[],
  ownerId: number,
  endCursor: number | undefined,
  consumedSeq: number | undefined,
): readonly TurnRecord[] {
  let next = true;
  return turns.map((record) => {
    if (record.id <= ownerId) return moveTurn(record, { type: 'over' });
    if (!next || !isLiveTurn(record)) return record;
    next = false;
    const startCursor =
      record.startCursor === undefined || (endCursor !== undefined && endCursor > record.startCursor)
        ? endCursor
        : record.startCursor;
    const answeredBefore =
      consumedSeq !== undefined && (record.seq === undefined || consumedSeq < record.seq)
        ? consumedSeq
        : undefined;
    return { ...record, startCursor, priorSeq: record.priorSeq ?? answeredBefore };
  });
}
