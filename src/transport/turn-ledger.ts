import { type ChatSessionState, MAX_QUEUED_TURNS, type SessionStore } from '../client/session-store.js';

/** How an append ended, for a resumed turn waiting for its seq. */
export type AppendAnswer = { ok: true; seq: number | undefined } | { ok: false; error: unknown };

/**
 * What made a turn live on this page: its own append (`message`, `regenerate`, `action`), an
 * action queued behind an earlier turn (`queued`), or nothing this page appended (`found`: the
 * turn the persisted record or another tab says is live when this page starts).
 */
export type TurnEntryKind = 'message' | 'regenerate' | 'action' | 'queued' | 'found';

export type TurnEntryState = 'sent' | 'stored' | 'started' | 'completed' | 'stopped' | 'failed';

/** What happened to a turn's append or its reply. */
export type TurnEntryEvent =
  | { type: 'answered'; seq: number | undefined }
  | { type: 'refused' }
  | { type: 'started' }
  | { type: 'completed' }
  | { type: 'stopped' }
  | { type: 'failed' };

/** One turn that went live on this page, in the order they did. */
export interface TurnEntry {
  readonly kind: TurnEntryKind;
  /** Counts from 0 (the `found` entry every ledger starts with). */
  readonly generation: number;
  /** The append's `X-Part-Id`, when this page appended it. */
  readonly partId: string | undefined;
  /** The append's `.in` seq, once answered (`undefined`: unknown, or the server gave none). */
  seq: number | undefined;
  state: TurnEntryState;
  /**
   * The append's answer, when the turn took the chat's live mark as it went out: a resume of
   * that turn meanwhile waits for its seq. `undefined` for a send that went out while another
   * turn was live (the mark, and a resume, stay that turn's).
   */
  readonly answer: Promise<AppendAnswer> | undefined;
  /** The stop appended for this turn while it is on its way: a second request is the same stop. */
  stop: Promise<void> | undefined;
  /**
   * Set when the user's abort of this send stopped it: the `.in` seq known before its append.
   * A refusal of the append, or a stop stored right after that seq, shows it was never stored.
   */
  stoppedBefore: { inSeq: number | undefined } | undefined;
}

/** Entries kept besides the current one: enough for a stop's or an answer's late arrival. */
const KEPT_ENTRIES = 8;

/**
 * A chat's turns as this page knows them: one entry per turn that went live (a send, an
 * action, a queued action promoted, the turn found live at start), the last one current. A
 * stop, an append's answer and a resume belong to the entry that was current when they were
 * asked for, so a late acknowledgement never ends a newer turn.
 *
 * | state \ event | answered        | refused | started | completed | stopped | failed |
 * |---------------|-----------------|---------|---------|-----------|---------|--------|
 * | sent          | stored (seq)    | failed  | started | completed | stopped | failed |
 * | stored        | – (seq)         | –       | started | completed | stopped | failed |
 * | started       | – (seq)         | –       | –       | completed | stopped | failed |
 * | completed     | – (seq)         | –       | –       | –         | –       | –      |
 * | stopped       | – (seq)         | –       | –       | –         | –       | –      |
 * | failed        | – (seq)         | –       | –       | –         | –       | –      |
 *
 * `answered` records the seq in every state (a reply may stream, even end, before its append is
 * answered); `refused` (the append failed for good) fails only a turn nothing of which was seen.
 *
 * The chat's live mark (the store's `turnLive`, `turnStored`, `turnStartCursor`, `turnInSeq`,
 * `turnPriorInSeq`) is written by these transitions on the transport's side: `goLive` (sent, it
 * takes the mark), `stored` (answered), `notStored` (refused or failed before anything of it
 * showed: the mark goes back), `stopStored` (its stop is stored), `over` (a turn read to its own
 * turn-complete, every chunk taken). A turn stream still clears it itself when a resumed turn
 * proves to be long over (trimmed, settled, another session). The stopped mark (`stoppedTurn`: a turn this page stopped but never
 * saw end) is the ledger's too (`markStopped`).
 *
 * Actions stored while a turn is live wait behind it, by seq, in the chat's store
 * (`queuedTurns`), which persists them: `promote` makes the next one current once the live turn
 * is over, here or on a page reloaded meanwhile.
 */
export class TurnLedger {
  readonly #entries: TurnEntry[] = [];
  readonly #settlers = new WeakMap<TurnEntry, (answer: AppendAnswer) => void>();
  readonly #store: SessionStore;

  constructor(store: SessionStore) {
    this.#store = store;
    this.#entries.push(newEntry('found', 0, undefined, undefined, 'stored', undefined));
  }

  /** The turn that went live last on this page (the `found` one before any did). */
  get current(): TurnEntry {
    return this.#entries[this.#entries.length - 1] as TurnEntry;
  }

  /** A stop for the current turn is on its way. */
  get stopping(): boolean {
    return this.current.stop !== undefined;
  }

  /**
   * A turn goes live: a send or an action going out (`sent`, `awaited`: it takes the chat's live
   * mark, so a resume meanwhile waits for its answer), or a queued action (`stored`, its seq known).
   */
  open(kind: TurnEntryKind, options: { partId?: string; seq?: number; awaited?: boolean } = {}): TurnEntry {
    let settle: ((answer: AppendAnswer) => void) | undefined;
    const answer =
      options.awaited === true
        ? new Promise<AppendAnswer>((resolve) => {
            settle = resolve;
          })
        : undefined;
    const state: TurnEntryState = kind === 'queued' || kind === 'found' ? 'stored' : 'sent';
    const entry = newEntry(kind, this.current.generation + 1, options.partId, options.seq, state, answer);
    if (settle !== undefined) this.#settlers.set(entry, settle);
    this.#entries.push(entry);
    if (this.#entries.length > KEPT_ENTRIES + 1) this.#entries.shift();
    return entry;
  }

  /**
   * A send or an action goes out and takes the chat's live mark: its turn starts after
   * `startCursor`, every input up to `priorSeq` was answered before it (when known). `extra` is
   * written with it (a send's saved append). A reload or a resume meanwhile knows it is live.
   */
  goLive(
    kind: 'message' | 'regenerate' | 'action',
    mark: { partId?: string; startCursor: number | undefined; priorSeq: number | undefined },
    extra: Partial<ChatSessionState> = {},
  ): TurnEntry {
    const entry = this.open(kind, { partId: mark.partId, awaited: true });
    this.#store.setState({
      turnLive: true,
      turnStored: false,
      turnStartCursor: mark.startCursor,
      turnInSeq: undefined,
      turnPriorInSeq: mark.priorSeq,
      ...extra,
    });
    return entry;
  }

  /**
   * The append of `entry` was answered with `seq`: while it is the live turn, the mark says so
   * (and names the seq, when the entry took the mark). `write` applies the patch (a send's clears
   * its saved append with it); by default the store, when there is anything to write.
   */
  stored(
    entry: TurnEntry,
    seq: number | undefined,
    write?: (patch: Partial<ChatSessionState>) => void,
  ): void {
    const state = this.#store.getState();
    let patch: Partial<ChatSessionState> = {};
    if (state.turnLive && this.isCurrent(entry)) {
      if (entry.answer !== undefined) patch = { turnStored: true, turnInSeq: seq };
      else if (!state.turnStored) patch = { turnStored: true };
    }
    if (write !== undefined) write(patch);
    else if (Object.keys(patch).length > 0) this.#store.setState(patch);
    this.answer(entry, { ok: true, seq });
  }

  /**
   * The append of `entry` failed (after its retries). A turn that took the mark, nothing of
   * which showed (`started`), is not live after all while it is current: the mark goes back to
   * `restoreCursor` (the start cursor before it went out).
   */
  notStored(entry: TurnEntry, error: unknown, started: boolean, restoreCursor: number | undefined): void {
    this.answer(entry, { ok: false, error });
    if (started) this.move(entry, { type: 'started' });
    this.move(entry, { type: 'refused' });
    const took = entry.answer !== undefined;
    if (took && !started && this.isCurrent(entry) && !this.#store.getState().closed)
      this.#store.setState({ turnLive: false, turnStored: false, turnStartCursor: restoreCursor });
  }

  /** The stop appended for `entry` is stored: while it is current, the chat is not live. */
  stopStored(entry: TurnEntry): void {
    this.move(entry, { type: 'stopped' });
    if (this.isCurrent(entry) && !this.#store.getState().closed)
      this.#store.setState({ turnLive: false, turnStored: false, turnStartCursor: undefined });
  }

  /** The entry is still the one live on this page (no newer turn went live since). */
  isCurrent(entry: TurnEntry): boolean {
    return this.current === entry;
  }

  /** The append of `entry` was answered, or failed: a resume waiting for it goes on. */
  answer(entry: TurnEntry, answer: AppendAnswer): void {
    if (answer.ok) this.move(entry, { type: 'answered', seq: answer.seq });
    this.#settlers.get(entry)?.(answer);
    this.#settlers.delete(entry);
  }

  /** The one transition function: see the table in the class comment. */
  move(entry: TurnEntry, event: TurnEntryEvent): void {
    if (event.type === 'answered') {
      entry.seq = event.seq;
      if (entry.state === 'sent') entry.state = 'stored';
      return;
    }
    const { state } = entry;
    if (state === 'completed' || state === 'stopped' || state === 'failed') return;
    switch (event.type) {
      case 'refused':
        if (state === 'sent') entry.state = 'failed';
        return;
      case 'started':
        entry.state = 'started';
        return;
      default:
        entry.state = event.type;
    }
  }

  /**
   * An action stored while another turn was live: its output is a turn after that one. Live at
   * once when that turn is over already (read from the cursor, told by its seq), else when it
   * ends (`promote`).
   */
  queue(seq: number | undefined): void {
    const { closed, turnLive, queuedTurns, lastEventId } = this.#store.getState();
    if (closed) return;
    if (!turnLive) {
      this.#goLiveQueued(seq, lastEventId, undefined);
      return;
    }
    if (queuedTurns.length < MAX_QUEUED_TURNS) this.#store.setState({ queuedTurns: [...queuedTurns, seq] });
  }

  /**
   * A turn read to its own turn-complete (at `endCursor`, having consumed `.in` up to
   * `consumedSeq`) is over for this page, its consumer has every chunk: the chat is not live,
   * unless an action queued behind it goes live now (`promote`).
   */
  over(endCursor: number | undefined, consumedSeq: number | undefined): void {
    this.#store.setState({ turnLive: false, turnStartCursor: undefined });
    this.promote(endCursor, consumedSeq);
  }

  /**
   * The live turn is over (its turn-complete at `endCursor`, having consumed `.in` up to
   * `consumedSeq`): the next queued action's turn is the live one now.
   */
  promote(endCursor: number | undefined, consumedSeq: number | undefined): void {
    const { turnLive, queuedTurns } = this.#store.getState();
    if (queuedTurns.length === 0 || turnLive) return;
    const [seq, ...rest] = queuedTurns;
    this.#store.setState({ queuedTurns: rest });
    this.#goLiveQueued(seq, endCursor, consumedSeq);
  }

  /** Nothing queued is resumed: the user stopped, or a send reads past those turns. */
  clearQueue(): void {
    if (this.#store.getState().queuedTurns.length > 0) this.#store.setState({ queuedTurns: [] });
  }

  #goLiveQueued(
    seq: number | undefined,
    startCursor: number | undefined,
    priorSeq: number | undefined,
  ): void {
    this.open('queued', { seq });
    this.#store.setState({
      turnLive: true,
      turnStored: true,
      turnStartCursor: startCursor,
      turnInSeq: seq,
      turnPriorInSeq: priorSeq === undefined || seq === undefined || priorSeq >= seq ? undefined : priorSeq,
    });
  }

  /**
   * This page stopped a turn it never saw end: once the stop is stored the chat is no longer
   * live, but that turn's turn-complete (or a tool's late output) may still be on its way. The
   * next send skips it (`started`: the turn was open at the cursor; `unstarted`: its reply had
   * not begun). In the store, so it persists: a reload between the stop and the next send skips
   * it too. `undefined` clears it.
   */
  markStopped(mark: 'started' | 'unstarted' | undefined): void {
    if (this.#store.getState().stoppedTurn !== mark) this.#store.setState({ stoppedTurn: mark });
  }

  /** The send whose abort marked a turn stopped, while that mark may still prove wrong. */
  stoppedSend(): TurnEntry | undefined {
    for (let index = this.#entries.length - 1; index >= 0; index--) {
      const entry = this.#entries[index] as TurnEntry;
      if (entry.stoppedBefore !== undefined) return entry;
    }
    return undefined;
  }

  /** Forgets every send's stopped mark (a newer send, or the mark proved wrong). */
  clearStoppedSends(): void {
    for (const entry of this.#entries) entry.stoppedBefore = undefined;
  }
}

function newEntry(
  kind: TurnEntryKind,
  generation: number,
  partId: string | undefined,
  seq: number | undefined,
  state: TurnEntryState,
  answer: Promise<AppendAnswer> | undefined,
): TurnEntry {
  return { kind, generation, partId, seq, state, answer, stop: undefined, stoppedBefore: undefined };
}
