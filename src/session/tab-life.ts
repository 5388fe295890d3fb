import type { UIMessage } from 'ai';
import { noteTabState } from '../client/inspection.js';
import { endLiveTurn, foundLiveTurn } from '../client/live-turn.js';
import { type PersistedChatRecord, parsePersistedRecord } from '../client/persistence.js';
import type { SessionClient } from '../client/session-client.js';
// Framework-free, kept in react/ while the turn-ledger work changes it (CONTRIBUTING.md, imports).
import { adoptPersistedRecord } from './adopt-persisted-record.js';
import type { ResolvedPersistence } from './browser-persistence.js';
import type { RemoteFinal, RemoteTurn, TabState } from './chat-session-options.js';
import type { TabCoordinator } from './tab-coordinator.js';

/** How long a send waits for an owner that is just letting go (its turn ended a moment ago). */
const ACQUIRE_GRACE_MS = 500;

/**
 * How long a tab that learned of a new turn from the shared record waits for the owner's
 * announcement (it carries the user's message) before it follows the turn without it.
 */
const ANNOUNCEMENT_GRACE_MS = 200;

export interface TabLifeOptions<UI_MESSAGE extends UIMessage> {
  client: SessionClient;
  coordinator: TabCoordinator | undefined;
  persistence: ResolvedPersistence;
  /** Show another tab's turn (or, after a takeover, this tab's own) in the chat. */
  onRemoteTurn(turn: RemoteTurn<UI_MESSAGE>): void;
  /** How another tab's turn ended on its screen: this tab ends alike. */
  onRemoteFinish(final: RemoteFinal<UI_MESSAGE>): void;
  /**
   * Another tab is stopping the live turn (see the `turn-stopped` message); `shown`: that tab
   * shows the turn and will tell how it ended; `unsent`: it appends no `stop` (no session yet).
   */
  onRemoteStop(shown: boolean, unsent: boolean): void;
  /** This tab took over a live turn whose owner went away: it drives the turn's end now. */
  onTakeOver(): void;
  /** The user message the live turn answers, from the record (undefined when it continues a reply or is unknown). */
  turnMessage(): UI_MESSAGE | undefined;
  /** A chat (useDurableChat or useFollowTurns) is mounted that reads turns. */
  hasChat(): boolean;
  /** A send is in flight. */
  busy(): boolean;
  /** This tab took over a live turn whose owner went away before its append was answered: send it again. */
  resendTakenOver(pending: { partId: string; body: string }): void;
  onTabState(state: TabState): void;
  warn(message: string): void;
}

/**
 * This tab's part in the chat's turn. The lock is the coordinator's (Web Locks, or the lease);
 * `owning` and `releasing` are exactly the phases in which this tab holds it.
 *
 * - `idle`: no turn of another tab shown, the lock not held.
 * - `following`: another tab owns the live turn; this tab shows it read-only and leaves the
 *   shared record to the owner (`recordHold`).
 * - `owning`: this tab holds the lock: a send or action in flight, its stream, a turn taken
 *   over. `heldForTurn`: kept until the live turn ends (an action's output, a takeover), not
 *   just until the send returns.
 * - `trailing`: this tab got the lock while it read another tab's turn, and the record says that
 *   turn ended (its owner finished and let go): there is nothing to drive, so it lets go of the
 *   lock at once (a send of any tab may start the next turn) and reads the ended turn to its end
 *   read-only, as in `following` (`showsOtherTabsTurn`). Its store is that read's until the
 *   turn ends there: turns announced meanwhile are kept (with the record as it was then) and
 *   followed in order once the read is over, and the record another tab writes meanwhile is merged then.
 *   A send of this tab itself takes the lock and waits (briefly) for that read to end first.
 *   A read that is over before the turn's end (it failed for good, or was stopped) ends the turn
 *   here as the record says it ended (`ended`).
 * - `releasing`: nothing of the turn is left on this page; the record is being written, and the
 *   lock goes once it is (a tab that takes the lock next reads it to tell an ended turn from an
 *   owner that went away mid-turn), unless something took the turn up again meanwhile.
 * - `disposed`: the chat unmounted for good.
 */
export type TabPhase =
  | { type: 'idle' }
  | { type: 'following' }
  | { type: 'owning'; heldForTurn: boolean }
  | { type: 'trailing' }
  | { type: 'releasing'; heldForTurn: boolean }
  | { type: 'disposed' };

/** What moves a tab from one phase to another (see `nextTabPhase`). */
export type TabEvent =
  /** A live turn another tab owns: announced, written to the record, or found live at load. */
  | { type: 'announced' }
  /** This tab got the lock: for a send (or action), or at the end of a follow's wait. */
  | { type: 'granted' }
  /** Keep the lock until the live turn ends. */
  | { type: 'hold' }
  /** Let go of the lock and read another tab's ended turn to its end (see `trailing`). */
  | { type: 'trail' }
  /** The live turn ended on this page (the store's `turnLive` went false). */
  | { type: 'ended' }
  /** Nothing of the turn is left on this page (no send, stream or held turn): write the record. */
  | { type: 'settled' }
  /** The record is written; `mayRelease`: still nothing of the turn on this page. */
  | { type: 'written'; mayRelease: boolean }
  | { type: 'dispose' };

/**
 * The one transition function of `TabPhase`; `–`: the event leaves the phase as it is.
 *
 * | phase \ event | announced | granted               | hold             | trail    | ended                            | settled   | written                                          | dispose  |
 * |---------------|-----------|-----------------------|------------------|----------|----------------------------------|-----------|--------------------------------------------------|----------|
 * | idle          | following | owning                | –                | –        | –                                | –         | –                                                | disposed |
 * | following     | –         | owning                | –                | –        | idle (the follow's wait goes on) | –         | –                                                | disposed |
 * | owning        | –         | –                     | owning (held)    | trailing | owning (not held)                | releasing | –                                                | disposed |
 * | trailing      | –         | owning                | –                | –        | idle (follows a kept turn)       | –         | –                                                | disposed |
 * | releasing     | –         | – (the write decides) | releasing (held) | –        | releasing (not held)             | –         | `mayRelease`: idle, else owning (held as it was) | disposed |
 * | disposed      | –         | –                     | –                | –        | –                                | –         | –                                                | –        |
 *
 * The follow's wait for the lock outlives `following`: a followed turn that ends here leaves it
 * waiting (the owner still holds the lock), and when it is granted the record says whether there
 * is a turn to take over (`owning`, held) or only another tab's ended turn to read to its end
 * (`trail`: `trailing`, and the lock goes at once). A tab announced to is never the owner
 * (`announced` is not sent then); a trailing tab keeps the announced turn (see `trailing`) and
 * follows it when its read ends (`ended`: `idle`, then `announced`).
 */
export function nextTabPhase(phase: TabPhase, event: TabEvent): TabPhase {
  if (phase.type === 'disposed') return phase;
  switch (event.type) {
    case 'dispose':
      return { type: 'disposed' };
    case 'announced':
      return phase.type === 'idle' ? { type: 'following' } : phase;
    case 'granted':
      return phase.type === 'idle' || phase.type === 'following' || phase.type === 'trailing'
        ? { type: 'owning', heldForTurn: false }
        : phase;
    case 'trail':
      return phase.type === 'owning' ? { type: 'trailing' } : phase;
    case 'hold':
    case 'ended': {
      const heldForTurn = event.type === 'hold';
      if (phase.type === 'owning' || phase.type === 'releasing') return { type: phase.type, heldForTurn };
      return (phase.type === 'following' || phase.type === 'trailing') && event.type === 'ended'
        ? { type: 'idle' }
        : phase;
    }
    case 'settled':
      return phase.type === 'owning' ? { type: 'releasing', heldForTurn: phase.heldForTurn } : phase;
    case 'written':
      if (phase.type !== 'releasing') return phase;
      return event.mayRelease ? { type: 'idle' } : { type: 'owning', heldForTurn: phase.heldForTurn };
  }
}

/**
 * Everything a mounted chat does with the other tabs, from attach to dispose: owning and
 * releasing turns, following a turn another tab owns, taking over from a tab that went
 * away, and merging the record when another tab writes it (`storage` events). Where the tab
 * stands is one `TabPhase`, moved only through `nextTabPhase`.
 */
export class TabLife<UI_MESSAGE extends UIMessage> {
  #phase: TabPhase = { type: 'idle' };
  #openStreams = 0;
  /** Streams that reached the chat and ended so far (`streamOpened`). */
  streamsEnded = 0;
  /** Resumes asked for whose stream has not reached the chat yet (`resumeStarted`). */
  #pendingResumes = 0;
  /** A follow's wait for the lock (see `nextTabPhase`: it may outlive `following`). */
  #watch: AbortController | undefined;
  readonly #cleanups: (() => void)[] = [];
  #published: TabState | undefined;
  /** A send waiting for an owner that is letting go; another tab's new turn ends the wait. */
  #grace: AbortController | undefined;
  /** Settles once this tab knows whether another tab owns the live turn it found (see `follow`). */
  #ownerKnown: Promise<void> = Promise.resolve();
  /** The record's first load, then `ownerKnown`: what `whenOwnerKnown` waits for. */
  readonly #loaded: Promise<void>;
  /**
   * Held from the first turn this tab follows until it owns one: the shared record is the
   * owner's to write. A follower's view trails the owner's, so its writes would put the record
   * back (an ended turn live again, an older cursor), and a tab loading that record (a reload)
   * would replay the ended turn as its own: save it, even append to it.
   */
  #recordHold: (() => void) | undefined;
  /** Turn announcements heard so far (a storage event's follow waits for the next one). */
  #announcements = 0;
  /** The wait for that announcement (one at a time: a newer storage event replaces it). */
  #announcementWait: unknown;
  /**
   * Turns announced while this tab trailed, in order, each with the record as it was then (it says
   * where the turn starts; the turn may have ended by the time this tab's read of the last one
   * has): followed one after another once that read ends (see `trailing`).
   */
  readonly #keptTurns: { message: UI_MESSAGE | undefined; record: PersistedChatRecord | undefined }[] = [];
  /** Live turns that ended on this page so far: a stream that saw none end was cut off before its turn's end. */
  #turnsEnded = 0;
  /** The turn this tab follows had no session to read yet: read it once the record names one. */
  #awaitingSession = false;
  /** Sends of this tab waiting for its read of another tab's ended turn to end (see `acquire`). */
  readonly #readWaiters: (() => void)[] = [];

  readonly #options: TabLifeOptions<UI_MESSAGE>;

  constructor(options: TabLifeOptions<UI_MESSAGE>) {
    this.#options = options;
    const { client, coordinator } = options;
    if (coordinator !== undefined) {
      this.#cleanups.push(
        coordinator.onMessage((message) => {
          if (message.type === 'turn-started') {
            this.#announcements += 1;
            // Another tab started a turn: a send of this tab waiting for the lock has lost the race.
            this.#grace?.abort();
            void this.#onAnnouncement(message.message as UI_MESSAGE | undefined);
          } else if (message.type === 'turn-finished' && !this.#disposed())
            options.onRemoteFinish({
              message: message.message as UI_MESSAGE | undefined,
              answers: message.answers,
              order: message.order,
            });
          else if (message.type === 'turn-stopped' && !this.#disposed())
            options.onRemoteStop(message.shown !== false, message.unsent === true);
        }),
        coordinator.onOwnershipChange(() => this.#publish()),
      );
    }
    this.#cleanups.push(
      client.store.subscribe((next, previous) => {
        if (next.turnLive || !previous.turnLive) return;
        this.#turnsEnded += 1;
        // A trailing read ended, or a kept turn followed after it: the next kept turn is due.
        const trailed = this.#phase.type === 'trailing' || this.#keptTurns.length > 0;
        this.#move({ type: 'ended' });
        this.settle();
        this.#publish();
        // Out of the store's notification: what comes next writes the store again.
        if (trailed) void Promise.resolve().then(() => this.#trailed());
      }),
    );
    this.#listenToStorage();
    this.#loaded = client.ready().then(
      () => {
        const state = client.getState();
        // A live turn at mount: the chat resumes it; meanwhile, see whether its owner is still here.
        if (state.turnLive && !state.closed && !this.#disposed()) this.#follow(undefined, false);
      },
      (error: unknown) => options.warn(`could not load the chat's record: ${String(error)}`),
    );
    this.#publish();
  }

  /**
   * Resolves once this tab knows whether the live turn it found belongs to another tab (then
   * `following` says so): at once with Web Locks, after the claim window with the lease.
   */
  async whenOwnerKnown(): Promise<void> {
    await this.#loaded;
    await this.#ownerKnown;
  }

  addCleanup(cleanup: () => void): void {
    this.#cleanups.push(cleanup);
  }

  /**
   * Owns the turn for this tab, waiting briefly for an owner that is finishing (not for one
   * that starts a new turn meanwhile: its announcement ends the wait, the send is refused).
   */
  async acquire(): Promise<boolean> {
    const { coordinator } = this.#options;
    if (coordinator === undefined) return true;
    if (await coordinator.acquire()) return this.#ownsAfterRead();
    const grace = new AbortController();
    this.#grace = grace;
    const timer = setTimeout(() => grace.abort(), ACQUIRE_GRACE_MS);
    try {
      return (await coordinator.waitForOwnership(grace.signal)) && (await this.#ownsAfterRead());
    } finally {
      clearTimeout(timer);
      if (this.#grace === grace) this.#grace = undefined;
    }
  }

  /**
   * Releases ownership once nothing of the turn is left on this page, after the record says
   * so: a tab that takes the lock next reads the record to tell an ended turn from an owner
   * that went away mid-turn.
   */
  settle(): void {
    if (this.#phase.type !== 'owning' || !this.#mayRelease()) return;
    this.#move({ type: 'settled' });
    const releasing = this.#phase;
    const written = () => {
      // Disposed meanwhile (the coordinator let go already).
      if (this.#phase !== releasing) return;
      const mayRelease = this.#mayRelease();
      this.#move({ type: 'written', mayRelease });
      if (!mayRelease) return;
      this.#options.coordinator?.release();
      this.#publish();
    };
    this.#options.client.flushPersistence().then(written, written);
  }

  /** Nothing of the turn is left on this page (read in `owning` and `releasing`). */
  #mayRelease(): boolean {
    const { coordinator, client } = this.#options;
    if (coordinator === undefined || !coordinator.isOwner || this.#options.busy() || this.#openStreams > 0)
      return false;
    const phase = this.#phase;
    const heldForTurn = (phase.type === 'owning' || phase.type === 'releasing') && phase.heldForTurn;
    return !(heldForTurn && client.getState().turnLive);
  }

  /**
   * `#ownsTurn`, once this tab's read of another tab's ended turn (`trailing`) is over: its own
   * turn goes after that one, as on the server (its send would cut the read short). Waits at most
   * ACQUIRE_GRACE_MS, holding the lock (this tab drives the next turn); then the send goes anyway.
   */
  async #ownsAfterRead(): Promise<true> {
    if (this.#phase.type === 'trailing') {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, ACQUIRE_GRACE_MS);
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.#readWaiters.push(done);
      });
    }
    return this.#ownsTurn();
  }

  /** The read a trailing tab's own send waits for is over (not trailing, no stream open): let it go. */
  #noteReadOver(): void {
    if (this.#readWaiters.length === 0 || this.#phase.type === 'trailing' || this.#openStreams > 0) return;
    for (const done of this.#readWaiters.splice(0)) done();
  }

  /** This tab drives a turn now: the record is its to write again. */
  #ownsTurn(): true {
    // Turns another tab announced while this one trailed are over by now (this tab got the lock).
    this.#keptTurns.length = 0;
    this.#granted();
    this.#releaseRecord();
    return true;
  }

  /** The coordinator gave this tab the lock (with mode `none` there is none to hold). */
  #granted(): void {
    if (this.#options.coordinator?.isOwner === true) this.#move({ type: 'granted' });
  }

  /** Keeps ownership until the live turn has ended (an action's output, a takeover), not just until the send returns. */
  holdForTurn(): void {
    if (this.#options.coordinator?.isOwner === true) this.#move({ type: 'hold' });
  }

  streamOpened(): () => void {
    this.#openStreams += 1;
    const ended = this.#turnsEnded;
    let closed = false;
    return () => {
      if (closed) return;
      closed = true;
      this.#openStreams -= 1;
      this.streamsEnded += 1;
      this.#noteReadOver();
      if (this.#turnsEnded === ended) this.#noteTrailCut();
      this.settle();
    };
  }

  /**
   * A stream closed before its turn ended here: when it was a trailing read and no other read is
   * open or asked for, it failed for good (or was stopped). The record says that turn ended (it
   * is why this tab trails), so this tab takes its word: the turn ends here as at its last record
   * (`ended`), and the turns kept meanwhile and the record are taken up. Otherwise the tab would
   * trail, keep them unshown and ignore the record until the chat is shown again. Checked a
   * microtask later: a resume that supersedes the read starts first.
   */
  #noteTrailCut(): void {
    void Promise.resolve().then(() => {
      const { client } = this.#options;
      if (this.#phase.type !== 'trailing' || this.#openStreams + this.#pendingResumes > 0) return;
      if (client.getState().turnLive) endLiveTurn(client.store);
    });
  }

  /** A resume was asked for; the returned function is called once its request is over. */
  resumeStarted(): () => void {
    this.#pendingResumes += 1;
    const sessionless = this.#options.client.getState().sessionId === undefined;
    let over = false;
    return () => {
      if (over) return;
      over = true;
      this.#pendingResumes -= 1;
      if (sessionless) this.#noteSessionlessFollow();
      this.settle();
    };
  }

  /**
   * A resume of the turn this tab follows ended with nothing to read: the turn's owner was still
   * starting the chat's session (a page reloaded before it existed sends its first message once
   * it has started it). The follow reads the turn once the record names the session.
   */
  #noteSessionlessFollow(): void {
    if (this.#options.client.getState().sessionId === undefined)
      this.#awaitingSession = this.#phase.type === 'following';
    // The session came while the resume looked: read now (out of the resume's own settling).
    else void Promise.resolve().then(() => this.#followAgain());
  }

  /** The turn this tab follows has a session now and nothing of it is being read: show it. */
  #followAgain(): void {
    this.#awaitingSession = false;
    const state = this.#options.client.getState();
    if (this.#phase.type !== 'following' || !state.turnLive || state.closed) return;
    if (this.#openStreams + this.#pendingResumes > 0 || !this.#options.hasChat()) return;
    // Shown before the read: the turn may end meanwhile, and then its read no longer brings it back.
    this.#options.onRemoteTurn({ message: this.#options.turnMessage() });
  }

  announce(message: UI_MESSAGE | undefined): void {
    const { coordinator, client } = this.#options;
    if (coordinator === undefined) return;
    // The record is saved first, so a tab that hears the news reads the new turn's cursor.
    client.flushPersistence().then(
      () => coordinator.announce({ type: 'turn-started', tabId: coordinator.tabId, message }),
      (error: unknown) => this.#options.warn(`could not save before announcing the turn: ${String(error)}`),
    );
  }

  /**
   * Tells the other tabs how this tab's turn ended, from its transcript then: the reply it
   * shows (or none: stopped before the first chunk) and the user message it answers.
   */
  announceFinished(messages: readonly UI_MESSAGE[]): void {
    const { coordinator } = this.#options;
    const last = messages.at(-1);
    if (coordinator === undefined || last === undefined) return;
    const { tabId } = coordinator;
    const order = messages.map((message) => message.id);
    if (last.role === 'user') {
      coordinator.announce({ type: 'turn-finished', tabId, answers: last.id, order });
      return;
    }
    if (last.role !== 'assistant') return;
    let asked: UI_MESSAGE | undefined;
    for (let index = messages.length - 2; index >= 0 && asked === undefined; index--)
      if (messages[index]?.role === 'user') asked = messages[index];
    coordinator.announce({
      type: 'turn-finished',
      tabId,
      message: last,
      order,
      ...(asked === undefined ? {} : { answers: asked.id }),
    });
  }

  /**
   * Tells the other tabs that this tab appends `stop` for the live turn (before it does);
   * `shown`: this tab shows the turn (it will tell how the turn ended).
   */
  announceStop(shown: boolean, unsent: boolean): void {
    const { coordinator } = this.#options;
    coordinator?.announce({ type: 'turn-stopped', tabId: coordinator.tabId, shown, unsent });
  }

  dispose(): void {
    this.#move({ type: 'dispose' });
    this.#watch?.abort();
    this.#watch = undefined;
    for (const cleanup of this.#cleanups.splice(0)) cleanup();
    this.#options.coordinator?.dispose();
  }

  async #onAnnouncement(message: UI_MESSAGE | undefined): Promise<void> {
    if (this.#disposed() || this.#options.coordinator?.isOwner === true) return;
    // Held before the owner's record is merged: the merge makes this tab's copy of the turn a
    // `found` entry without the owner's unanswered append (`pendingAppend`), and written back it
    // would replace the owner's record, so a reload of the owner before its append went out
    // could no longer send it again (nothing appended, every tab following forever).
    const hold = this.#options.client.holdPersistence();
    try {
      const record = await this.#readRecord();
      if (this.#disposed()) return;
      // Still reading another tab's ended turn, or following one it has not read to its end: this
      // tab's store is that read's until it ends (adopted now, the record would move the read past
      // that turn's reply). Turns kept then are followed first, in order: this one after them.
      const reading = this.#phase.type === 'following' && this.#options.client.getState().turnLive;
      if (reading || this.#phase.type === 'trailing' || this.#keptTurns.length > 0) {
        this.#keptTurns.push({ message, record });
        return;
      }
      if (record !== undefined) adoptPersistedRecord(this.#options.client, record);
      this.#follow(message, true);
    } finally {
      // `follow` took the hold for as long as this tab follows (or there is nothing to follow).
      hold();
    }
  }

  #adopt(raw: unknown): boolean {
    const { client } = this.#options;
    const record = parsePersistedRecord(raw, client.chatId);
    if (typeof record === 'string') {
      this.#options.warn(`ignoring a record another tab wrote for chat ${client.chatId} (${record})`);
      return false;
    }
    return adoptPersistedRecord(client, record);
  }

  #follow(message: UI_MESSAGE | undefined, showInChat: boolean): void {
    const { client, coordinator } = this.#options;
    if (
      client.getState().closed ||
      coordinator === undefined ||
      coordinator.mode === 'none' ||
      coordinator.isOwner
    )
      return;
    this.#move({ type: 'announced' });
    this.#recordHold ??= client.holdPersistence();
    this.#publish();
    if (showInChat) this.#options.onRemoteTurn({ message });
    if (this.#watch !== undefined) return;
    const watch = new AbortController();
    this.#watch = watch;
    // Whether another tab owns the turn is known at once with Web Locks, after the claim window
    // with the lease; until then `ownerKnown` is pending (a resume decides then whether it follows).
    // The record says whether the turn is still live: the owner writes it before it lets go.
    const owned = async (granted: boolean) => {
      if (this.#watch === watch) this.#watch = undefined;
      if (!granted || this.#disposed()) return;
      this.#granted();
      this.#publish();
      this.#takeOver(await this.#readRecord());
    };
    // Settles once `following` says whether the turn is another tab's (a free lock is taken
    // first), and a turn this tab then drives is taken over.
    const known = coordinator.acquire({ liveTurn: true }).then(
      async (granted) => {
        if (granted) await owned(true);
        return granted;
      },
      () => false,
    );
    this.#ownerKnown = known.then(() => undefined);
    void known.then((granted) => {
      if (!granted) void coordinator.waitForOwnership(watch.signal).then(owned);
    });
  }

  /**
   * This tab's read of another tab's ended turn is over (`trailing` ended): a turn announced
   * meanwhile is followed from where the record said it starts (read to its end, even when it has
   * ended by now); with none, the record as another tab wrote it meanwhile is merged now.
   */
  async #trailed(): Promise<void> {
    const { client } = this.#options;
    if (this.#phase.type !== 'idle') return;
    const kept = this.#keptTurns.shift();
    const record = kept?.record;
    if (kept === undefined || record === undefined || !record.turnLive || record.closed) {
      const now = await this.#readRecord();
      if (now === undefined || this.#phase.type !== 'idle') return;
      if (adoptPersistedRecord(client, now)) this.#learnedOfTurn();
      else if (kept !== undefined && client.getState().turnLive) this.#follow(kept.message, true);
      return;
    }
    adoptPersistedRecord(client, record);
    const state = client.getState();
    if (!state.turnLive && !state.closed) {
      // This tab's read went past the record the owner wrote then: the turn is still to be shown.
      if (record.turnMessage !== state.turnMessage)
        client.store.setState({ turnMessage: record.turnMessage });
      foundLiveTurn(client.store, {
        // The owner sent it while the turn this tab just read was live, so it knew no start for
        // it: it starts after that turn, where this tab's read ended. Without a start the resume
        // reads the chat from its beginning and shows that earlier reply as this turn's.
        startCursor: record.turnStartCursor ?? state.lastEventId,
        stored: false,
        seq: record.turnInSeq,
        priorSeq: record.turnPriorInSeq,
      });
    }
    this.#follow(kept.message, true);
  }

  /** The record as another tab wrote it last (undefined when there is none or it is unusable). */
  async #readRecord(): Promise<PersistedChatRecord | undefined> {
    const { client, persistence } = this.#options;
    let raw: unknown;
    try {
      raw = await persistence.adapter?.load(client.chatId);
    } catch (error) {
      this.#options.warn(`could not read the record another tab wrote: ${String(error)}`);
      return undefined;
    }
    if (raw === undefined || raw === null) return undefined;
    const record = parsePersistedRecord(raw, client.chatId);
    if (typeof record === 'object') return record;
    this.#options.warn(`ignoring a record another tab wrote for chat ${client.chatId} (${record})`);
    return undefined;
  }

  /**
   * This tab got the lock while it followed a turn. When the turn is still live (a lone
   * reload found it live; or the owner went away mid-turn, its `record` still says live) this
   * tab now drives it: it writes the record again and shows the turn if it was not shown.
   * When the record says the turn ended (the owner finished and wrote so before it let go),
   * there is nothing to take over: this tab's view only trails, so it keeps leaving the record
   * to the owners, keeps the lock only while it reads the turn to its end, and, reading nothing,
   * takes the record's word for it.
   */
  #takeOver(record: PersistedChatRecord | undefined): void {
    if (this.#disposed()) return;
    const { client, hasChat } = this.#options;
    const state = client.getState();
    const live = state.turnLive && hasChat();
    const ended = record !== undefined && (!record.turnLive || record.closed);
    // Nothing of the live turn read here yet (its start is where this tab's view ends: a
    // transcript's cursor behind the record, see `withHistoryCursor`), and the record says it
    // ended further along: the turn is still to be shown here, so it is read, not skipped.
    const unread =
      ended &&
      !record.closed &&
      state.turnStartCursor !== undefined &&
      state.lastEventId === state.turnStartCursor &&
      (record.lastEventId ?? -1) > state.turnStartCursor;
    // No other tab drives the turn: this tab's view is the newest there is.
    if (!ended) this.#releaseRecord();
    if (live && !ended) {
      this.#options.onTakeOver();
      this.#move({ type: 'hold' });
      // The owner went away before its append was answered (it may never have left): this tab
      // sends it again under its part id, or the turn would wait for a reply that never comes.
      if (record?.pendingAppend !== undefined) this.#options.resendTakenOver(record.pendingAppend);
      // Shown here already, or about to be (a resume asked for before the takeover). Queued
      // behind that read, a second resume would start as the chat goes idle: after the user's
      // stop it replays the stopped turn (the stop taken for a superseded resume, nothing
      // appended; or the reply saved as if it had ended).
      if (this.#openStreams + this.#pendingResumes === 0) this.#options.onRemoteTurn({ message: undefined });
    } else if (live && (unread || this.#openStreams + this.#pendingResumes > 0)) {
      // Nothing to drive: the lock goes at once, so that the next turn's send is not refused.
      this.#move({ type: 'trail' });
      this.#options.coordinator?.release();
    } else if (ended && this.#openStreams + this.#pendingResumes === 0) adoptPersistedRecord(client, record);
    this.settle();
    this.#publish();
  }

  #releaseRecord(): void {
    this.#recordHold?.();
    this.#recordHold = undefined;
  }

  #listenToStorage(): void {
    const { persistence, client } = this.#options;
    const web = persistence.webStorage;
    const target = (globalThis as { window?: EventTarget }).window;
    if (web === undefined || target?.addEventListener === undefined) return;
    const key = web.key(client.chatId);
    const onStorage = (event: Event) => {
      const { key: changed, newValue, storageArea } = event as StorageEvent;
      if (changed !== key || newValue === null || (storageArea !== null && storageArea !== web.area()))
        return;
      // A trailing tab merges the record once its read ends (see `trailing`).
      if (this.#phase.type === 'trailing') return;
      // Merged, not written back: this tab's copy of a turn it learns of here lacks what only its
      // writer knows (the append of a send its page left before it went out), and written back
      // it would replace that record, so neither the reloaded page nor a tab taking the turn over
      // could send the message (every tab waiting for a reply that never comes).
      const hold = client.holdPersistence();
      let learned: boolean;
      try {
        learned = this.#adopt(newValue);
      } finally {
        hold();
      }
      if (learned) this.#learnedOfTurn();
      else if (this.#awaitingSession && client.getState().sessionId !== undefined) this.#followAgain();
    };
    target.addEventListener('storage', onStorage);
    this.#cleanups.push(() => {
      target.removeEventListener('storage', onStorage);
      if (this.#announcementWait !== undefined) client.environment.clearTimeout(this.#announcementWait);
    });
  }

  /** The record another tab wrote says a turn is live that this tab did not know of: follow it. */
  #learnedOfTurn(): void {
    const { client, coordinator } = this.#options;
    if (coordinator?.hasChannel !== true) {
      this.#follow(this.#options.turnMessage(), true);
      return;
    }
    // The announcement (which carries the user's message) normally follows. A tab that was
    // still loading when the owner posted it never hears it (the record it loaded was older
    // than the turn): it follows the turn without it then (the record holds the message).
    const heard = this.#announcements;
    if (this.#announcementWait !== undefined) client.environment.clearTimeout(this.#announcementWait);
    this.#announcementWait = client.environment.setTimeout(() => {
      this.#announcementWait = undefined;
      if (this.#announcements === heard && !this.#disposed() && client.getState().turnLive)
        this.#follow(this.#options.turnMessage(), true);
    }, ANNOUNCEMENT_GRACE_MS);
  }

  /** Moves along the table of `nextTabPhase`. */
  #move(event: TabEvent): void {
    this.#phase = nextTabPhase(this.#phase, event);
    this.#noteReadOver();
  }

  #disposed(): boolean {
    return this.#phase.type === 'disposed';
  }

  /**
   * The live turn this tab shows is another tab's: it follows it, or it holds the lock only to
   * read that tab's ended turn to its end (`trailing`). A resume is then shown read-only.
   */
  showsOtherTabsTurn(): boolean {
    return this.#phase.type === 'following' || this.#phase.type === 'trailing';
  }

  /** Where this tab stands (see `TabPhase`). */
  get currentPhase(): TabPhase {
    return this.#phase;
  }

  #publish(): void {
    const { coordinator } = this.#options;
    // A trailing tab holds the lock, but the turn it shows is another tab's: it follows it.
    const following = this.showsOtherTabsTurn();
    const state: TabState = {
      mode: coordinator?.mode ?? 'none',
      owner: (coordinator?.isOwner ?? false) && !following,
      following,
    };
    const last = this.#published;
    if (last?.mode === state.mode && last.owner === state.owner && last.following === state.following) return;
    this.#published = state;
    this.#options.onTabState(state);
    const { client } = this.#options;
    noteTabState(client, state, client.environment.now());
  }
}
