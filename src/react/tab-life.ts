import type { UIMessage } from 'ai';
import { noteTabState } from '../client/inspection.js';
import { type PersistedChatRecord, parsePersistedRecord } from '../client/persistence.js';
import type { SessionClient } from '../client/session-client.js';
import { adoptPersistedRecord } from './adopt-persisted-record.js';
import type { ResolvedPersistence } from './browser-persistence.js';
import type { RemoteTurn, TabState } from './chat-session-options.js';
import type { TabCoordinator } from './tab-coordinator.js';

/** How long a send waits for an owner that is just letting go (its turn ended a moment ago). */
const ACQUIRE_GRACE_MS = 500;

export interface TabLifeOptions<UI_MESSAGE extends UIMessage> {
  client: SessionClient;
  coordinator: TabCoordinator | undefined;
  persistence: ResolvedPersistence;
  /** Show another tab's turn (or, after a takeover, this tab's own) in the chat. */
  onRemoteTurn(turn: RemoteTurn<UI_MESSAGE>): void;
  /** Another tab's reply as it ended: replaces this tab's copy of it. */
  onRemoteFinish(message: UI_MESSAGE): void;
  /** A chat (useDurableChat or useFollowTurns) is mounted that reads turns. */
  hasChat(): boolean;
  /** A send is in flight. */
  busy(): boolean;
  onTabState(state: TabState): void;
  warn(message: string): void;
}

/**
 * Everything a mounted chat does with the other tabs, from attach to dispose: owning and
 * releasing turns, following a turn another tab owns, taking over from a tab that went
 * away, and merging the record when another tab writes it (`storage` events).
 */
export class TabLife<UI_MESSAGE extends UIMessage> {
  private openStreams = 0;
  /** Resumes asked for whose stream has not reached the chat yet (`resumeStarted`). */
  private pendingResumes = 0;
  private following = false;
  private heldForTurn = false;
  /** `settle` waits for the record to be written before it lets go of the lock. */
  private releasing = false;
  private watch: AbortController | undefined;
  private disposed = false;
  private readonly cleanups: (() => void)[] = [];
  private published: TabState | undefined;
  /** A send waiting for an owner that is letting go; another tab's new turn ends the wait. */
  private grace: AbortController | undefined;
  /** Settles once this tab knows whether another tab owns the live turn it found (see `follow`). */
  private ownerKnown: Promise<void> = Promise.resolve();
  /** The record's first load, then `ownerKnown`: what `whenOwnerKnown` waits for. */
  private readonly loaded: Promise<void>;
  /**
   * Held from the first turn this tab follows until it owns one: the shared record is the
   * owner's to write. A follower's view trails the owner's, so its writes would put the record
   * back (an ended turn live again, an older cursor), and a tab loading that record (a reload)
   * would replay the ended turn as its own: save it, even append to it.
   */
  private recordHold: (() => void) | undefined;

  constructor(private readonly options: TabLifeOptions<UI_MESSAGE>) {
    const { client, coordinator } = options;
    if (coordinator !== undefined) {
      this.cleanups.push(
        coordinator.onMessage((message) => {
          if (message.type === 'turn-started') {
            // Another tab started a turn: a send of this tab waiting for the lock has lost the race.
            this.grace?.abort();
            void this.onAnnouncement(message.message as UI_MESSAGE | undefined);
          } else if (message.type === 'turn-finished' && !this.disposed)
            options.onRemoteFinish(message.message as UI_MESSAGE);
        }),
        coordinator.onOwnershipChange(() => this.publish()),
      );
    }
    this.cleanups.push(
      client.store.subscribe((next, previous) => {
        if (next.turnLive || !previous.turnLive) return;
        this.following = false;
        this.heldForTurn = false;
        this.settle();
        this.publish();
      }),
    );
    this.listenToStorage();
    this.loaded = client.ready().then(
      () => {
        const state = client.getState();
        // A live turn at mount: the chat resumes it; meanwhile, see whether its owner is still here.
        if (state.turnLive && !state.closed && !this.disposed) this.follow(undefined, false);
      },
      (error: unknown) => options.warn(`could not load the chat's record: ${String(error)}`),
    );
    this.publish();
  }

  /**
   * Resolves once this tab knows whether the live turn it found belongs to another tab (then
   * `following` says so): at once with Web Locks, after the claim window with the lease.
   */
  async whenOwnerKnown(): Promise<void> {
    await this.loaded;
    await this.ownerKnown;
  }

  addCleanup(cleanup: () => void): void {
    this.cleanups.push(cleanup);
  }

  /**
   * Owns the turn for this tab, waiting briefly for an owner that is finishing (not for one
   * that starts a new turn meanwhile: its announcement ends the wait, the send is refused).
   */
  async acquire(): Promise<boolean> {
    const { coordinator } = this.options;
    if (coordinator === undefined) return true;
    if (await coordinator.acquire()) return this.ownsTurn();
    const grace = new AbortController();
    this.grace = grace;
    const timer = setTimeout(() => grace.abort(), ACQUIRE_GRACE_MS);
    try {
      return (await coordinator.waitForOwnership(grace.signal)) && this.ownsTurn();
    } finally {
      clearTimeout(timer);
      if (this.grace === grace) this.grace = undefined;
    }
  }

  /**
   * Releases ownership once nothing of the turn is left on this page, after the record says
   * so: a tab that takes the lock next reads the record to tell an ended turn from an owner
   * that went away mid-turn.
   */
  settle(): void {
    if (!this.mayRelease() || this.releasing) return;
    this.releasing = true;
    const release = () => {
      this.releasing = false;
      if (!this.mayRelease()) return;
      this.heldForTurn = false;
      this.options.coordinator?.release();
      this.publish();
    };
    this.options.client.flushPersistence().then(release, release);
  }

  private mayRelease(): boolean {
    const { coordinator, client } = this.options;
    if (coordinator === undefined || !coordinator.isOwner || this.options.busy() || this.openStreams > 0)
      return false;
    return !(this.heldForTurn && client.getState().turnLive);
  }

  /** This tab drives a turn now: the record is its to write again. */
  private ownsTurn(): true {
    this.releaseRecord();
    return true;
  }

  /** Keeps ownership until the live turn has ended (an action's output, a takeover), not just until the send returns. */
  holdForTurn(): void {
    if (this.options.coordinator?.isOwner === true) this.heldForTurn = true;
  }

  streamOpened(): () => void {
    this.openStreams += 1;
    let closed = false;
    return () => {
      if (closed) return;
      closed = true;
      this.openStreams -= 1;
      this.settle();
    };
  }

  /** A resume was asked for; the returned function is called once its request is over. */
  resumeStarted(): () => void {
    this.pendingResumes += 1;
    let over = false;
    return () => {
      if (over) return;
      over = true;
      this.pendingResumes -= 1;
      this.settle();
    };
  }

  announce(message: UI_MESSAGE | undefined): void {
    const { coordinator, client } = this.options;
    if (coordinator === undefined) return;
    // The record is saved first, so a tab that hears the news reads the new turn's cursor.
    client.flushPersistence().then(
      () => coordinator.announce({ type: 'turn-started', tabId: coordinator.tabId, message }),
      (error: unknown) => this.options.warn(`could not save before announcing the turn: ${String(error)}`),
    );
  }

  /** Tells the other tabs how this tab's reply ended. */
  announceFinished(message: UI_MESSAGE): void {
    const { coordinator } = this.options;
    coordinator?.announce({ type: 'turn-finished', tabId: coordinator.tabId, message });
  }

  dispose(): void {
    this.disposed = true;
    this.watch?.abort();
    this.watch = undefined;
    for (const cleanup of this.cleanups.splice(0)) cleanup();
    this.options.coordinator?.dispose();
  }

  private async onAnnouncement(message: UI_MESSAGE | undefined): Promise<void> {
    if (this.disposed || this.options.coordinator?.isOwner === true) return;
    await this.rereadRecord();
    if (this.disposed) return;
    this.follow(message, true);
  }

  private adopt(raw: unknown): boolean {
    const { client } = this.options;
    const record = parsePersistedRecord(raw, client.chatId);
    if (typeof record === 'string') {
      this.options.warn(`ignoring a record another tab wrote for chat ${client.chatId} (${record})`);
      return false;
    }
    return adoptPersistedRecord(client, record);
  }

  private follow(message: UI_MESSAGE | undefined, showInChat: boolean): void {
    const { client, coordinator } = this.options;
    if (
      client.getState().closed ||
      coordinator === undefined ||
      coordinator.mode === 'none' ||
      coordinator.isOwner
    )
      return;
    this.following = true;
    this.recordHold ??= client.holdPersistence();
    this.publish();
    if (showInChat) this.options.onRemoteTurn({ message });
    if (this.watch !== undefined) return;
    const watch = new AbortController();
    this.watch = watch;
    // Whether another tab owns the turn is known at once with Web Locks, after the claim window
    // with the lease; until then `ownerKnown` is pending (a resume decides then whether it follows).
    // The record says whether the turn is still live: the owner writes it before it lets go.
    const owned = async (granted: boolean) => {
      if (this.watch === watch) this.watch = undefined;
      if (!granted || this.disposed) return;
      this.following = false;
      this.publish();
      this.takeOver(await this.readRecord());
    };
    // Settles once `following` says whether the turn is another tab's (a free lock is taken
    // first), and a turn this tab then drives is taken over.
    const known = coordinator.acquire().then(
      async (granted) => {
        if (granted) await owned(true);
        return granted;
      },
      () => false,
    );
    this.ownerKnown = known.then(() => undefined);
    void known.then((granted) => {
      if (!granted) void coordinator.waitForOwnership(watch.signal).then(owned);
    });
  }

  /** Adopts the record as it is now (another tab wrote it last). */
  private async rereadRecord(): Promise<void> {
    const record = await this.readRecord();
    if (record !== undefined) adoptPersistedRecord(this.options.client, record);
  }

  /** The record as another tab wrote it last (undefined when there is none or it is unusable). */
  private async readRecord(): Promise<PersistedChatRecord | undefined> {
    const { client, persistence } = this.options;
    let raw: unknown;
    try {
      raw = await persistence.adapter?.load(client.chatId);
    } catch (error) {
      this.options.warn(`could not read the record another tab wrote: ${String(error)}`);
      return undefined;
    }
    if (raw === undefined || raw === null) return undefined;
    const record = parsePersistedRecord(raw, client.chatId);
    if (typeof record === 'object') return record;
    this.options.warn(`ignoring a record another tab wrote for chat ${client.chatId} (${record})`);
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
  private takeOver(record: PersistedChatRecord | undefined): void {
    if (this.disposed) return;
    const { client, hasChat } = this.options;
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
    if (!ended) this.releaseRecord();
    if (live && !ended) {
      this.heldForTurn = true;
      if (this.openStreams === 0) this.options.onRemoteTurn({ message: undefined });
    } else if (live && (unread || this.openStreams + this.pendingResumes > 0)) this.heldForTurn = true;
    else if (ended && this.openStreams + this.pendingResumes === 0) adoptPersistedRecord(client, record);
    this.settle();
    this.publish();
  }

  private releaseRecord(): void {
    this.recordHold?.();
    this.recordHold = undefined;
  }

  private listenToStorage(): void {
    const { persistence, client, coordinator } = this.options;
    const web = persistence.webStorage;
    const target = (globalThis as { window?: EventTarget }).window;
    if (web === undefined || target?.addEventListener === undefined) return;
    const key = web.key(client.chatId);
    const onStorage = (event: Event) => {
      const { key: changed, newValue, storageArea } = event as StorageEvent;
      if (changed !== key || newValue === null || (storageArea !== null && storageArea !== web.area()))
        return;
      const startsTurn = this.adopt(newValue);
      // With a BroadcastChannel the announcement (which carries the user's message) follows.
      if (startsTurn && coordinator?.hasChannel === false) this.follow(undefined, true);
    };
    target.addEventListener('storage', onStorage);
    this.cleanups.push(() => target.removeEventListener('storage', onStorage));
  }

  private publish(): void {
    const { coordinator } = this.options;
    const state: TabState = {
      mode: coordinator?.mode ?? 'none',
      owner: coordinator?.isOwner ?? false,
      following: this.following,
    };
    const last = this.published;
    if (last?.mode === state.mode && last.owner === state.owner && last.following === state.following) return;
    this.published = state;
    this.options.onTabState(state);
    const { client } = this.options;
    noteTabState(client, state, client.environment.now());
  }
}
