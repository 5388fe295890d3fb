import { type ClientEnvironment, randomPartId, sleep } from '../client/environment.js';
import {
  type CoordinatorEvent,
  type CoordinatorPhase,
  claimInRunning,
  nextCoordinatorPhase,
} from './coordinator-phase.js';
import {
  type BroadcastChannelLike,
  defaultBroadcastChannel,
  defaultLocks,
  type LockManagerLike,
  parseTabMessage,
  type TabMessage,
} from './tab-channel.js';

/** How tabs agree on who drives a chat's turn. */
export type TabMode = 'locks' | 'broadcast' | 'none';

export interface TabCoordinationOptions {
  /** Web Locks (`navigator.locks` by default; `null` turns them off). Preferred: a crashed tab's lock is freed by the browser. */
  locks?: LockManagerLike | null;
  /** BroadcastChannel factory (the global one by default; `null` turns it off). Carries turn announcements, and the lease when there are no locks. */
  broadcastChannel?: ((name: string) => BroadcastChannelLike) | null;
  /** Broadcast-lease mode: an owner beats this often and counts as gone after 3 silent beats. Default 1000 ms. */
  heartbeatMs?: number;
}

const FRESH_BEATS = 3;

/**
 * Decides which tab owns a chat's turn. With Web Locks ownership is an exclusive lock
 * named after the chat; without them, a lease over a BroadcastChannel (claims, heartbeats);
 * with neither, every tab acts alone (`none`). Also relays turn announcements. Where this tab
 * stands is one `CoordinatorPhase`, moved only through `nextCoordinatorPhase`.
 */
export class TabCoordinator {
  readonly tabId = randomPartId().slice(0, 16);
  readonly mode: TabMode;
  #phase: CoordinatorPhase = { type: 'idle' };
  /** The id of this tab's latest claim (see `PendingClaim`). */
  #claims = 0;
  readonly #locks: LockManagerLike | undefined;
  readonly #channel: BroadcastChannelLike | undefined;
  readonly #listeners = new Set<(message: TabMessage) => void>();
  readonly #ownershipListeners = new Set<() => void>();
  /** Waits for ownership between two tries (see `waitForOwnership`). */
  readonly #naps = new Set<() => void>();
  /** The lease: the last owner this tab heard of, whatever its own phase (see `#foreignOwnerIsFresh`). */
  #ownerSeen: { tabId: string; at: number } | undefined;
  readonly #heartbeatMs: number;
  readonly #lockName: string;

  readonly #env: ClientEnvironment;

  constructor(chatId: string, options: TabCoordinationOptions, env: ClientEnvironment) {
    this.#env = env;
    this.#lockName = `durable-chat:${chatId}`;
    this.#heartbeatMs = options.heartbeatMs ?? 1000;
    this.#locks = options.locks === null ? undefined : (options.locks ?? defaultLocks());
    const createChannel =
      options.broadcastChannel === null ? undefined : (options.broadcastChannel ?? defaultBroadcastChannel());
    this.#channel = createChannel?.(this.#lockName);
    this.#channel?.addEventListener('message', this.#onChannelMessage);
    this.mode = this.#locks !== undefined ? 'locks' : this.#channel !== undefined ? 'broadcast' : 'none';
  }

  /** True when a BroadcastChannel carries announcements between tabs. */
  get hasChannel(): boolean {
    return this.#channel !== undefined;
  }

  /** True while this tab owns the chat's turn. */
  get isOwner(): boolean {
    return this.#phase.type === 'owning';
  }

  /**
   * Tries to own the turn now; false when another tab owns it. `liveTurn`: a turn is known to
   * be live (found at load), so its owner may well be here: with the lease, the claim then
   * waits one heartbeat more (see `#claimWindowMs`).
   */
  async acquire(options: { liveTurn?: boolean } = {}): Promise<boolean> {
    if (this.isOwner || this.mode === 'none') return true;
    if (this.mode === 'locks') return this.#requestLock({ ifAvailable: true });
    if (this.#foreignOwnerIsFresh()) return false;
    const id = ++this.#claims;
    const at = this.#env.now();
    this.#move({ type: 'claim', id, at });
    if (this.#phase.type === 'disposed') return false;
    this.#post({ type: 'claim', tabId: this.tabId, at });
    await sleep(this.#env, this.#claimWindowMs(options.liveTurn === true));
    // A message that arrived while this tab's timer was late (its page was busy) is read before
    // it decides: the timer and the channel are separate task queues.
    await sleep(this.#env, 0);
    let beating: unknown;
    const letGo = () => {
      this.#env.clearTimeout(beating);
      this.#post({ type: 'released', tabId: this.tabId });
    };
    const won = claimInRunning(this.#phase, id);
    this.#move({ type: 'windowEnded', id, letGo });
    if (this.#holds(letGo)) {
      const beat = () => {
        this.#post({ type: 'heartbeat', tabId: this.tabId });
        beating = this.#env.setTimeout(beat, this.#heartbeatMs);
      };
      beat();
    }
    return won;
  }

  /** Resolves true once this tab owns the turn (the owner finished or went away); false if `signal` aborts first. */
  async waitForOwnership(signal: AbortSignal): Promise<boolean> {
    if (this.isOwner || this.mode === 'none') return true;
    if (this.mode === 'locks') return this.#requestLock({ signal });
    // Between two tries it waits a heartbeat, or less: an owner letting go (`released`) wakes the
    // wait at once, so a send waiting out a turn that ends within its grace is not refused for a
    // beat still to come; so does `dispose`: the wait of a chat that is gone ends at once. The wake
    // is armed before the try's claim: an owner heard during the claim (so the claim lost) may let
    // go before the claim's window ends, and then the next try is due at once, not a beat later.
    while (!signal.aborted && this.#phase.type !== 'disposed') {
      const nap = new AbortController();
      const wake = () => nap.abort();
      this.#naps.add(wake);
      signal.addEventListener('abort', wake);
      try {
        if (!this.#foreignOwnerIsFresh() && (await this.acquire())) return true;
        await sleep(this.#env, this.#heartbeatMs, nap.signal).catch(() => undefined);
      } finally {
        this.#naps.delete(wake);
        signal.removeEventListener('abort', wake);
      }
    }
    return false;
  }

  release(): void {
    this.#move({ type: 'release' });
  }

  announce(message: TabMessage): void {
    this.#post(message);
  }

  onMessage(listener: (message: TabMessage) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  onOwnershipChange(listener: () => void): () => void {
    this.#ownershipListeners.add(listener);
    return () => this.#ownershipListeners.delete(listener);
  }

  dispose(): void {
    // Released first: the lease's `released` still reaches the other tabs.
    this.release();
    this.#move({ type: 'dispose' });
    for (const wake of [...this.#naps]) wake();
    this.#channel?.removeEventListener('message', this.#onChannelMessage);
    this.#channel?.close();
    this.#listeners.clear();
  }

  #requestLock(options: { ifAvailable?: boolean; signal?: AbortSignal }): Promise<boolean> {
    const locks = this.#locks;
    if (locks === undefined) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      locks
        .request(this.#lockName, options, (lock) => {
          // The lock is held until this promise settles: on release(), or when the tab dies.
          let letGo = () => {};
          const held = new Promise<void>((done) => {
            letGo = done;
          });
          if (lock !== null) this.#move({ type: 'granted', letGo });
          const taken = this.#holds(letGo);
          resolve(this.isOwner);
          return taken ? held : undefined;
        })
        .catch((error: unknown) => {
          if (options.signal?.aborted !== true) this.#env.warn(`tab lock request failed: ${String(error)}`);
          resolve(false);
        });
    });
  }

  /**
   * An owner answers a claim as soon as its page handles the message, which a busy page (a long
   * render) may do only after a while; it also beats every `heartbeatMs`, busy or not. A claim
   * with no owner in sight (a send) waits briefly: an owner would have been heard beating. A
   * claim on a live turn whose owner this tab has not heard yet (a reload) waits one beat more,
   * so that only an owner silent for a whole beat loses its turn to a second driver.
   */
  #claimWindowMs(liveTurn: boolean): number {
    const answer = Math.max(20, this.#heartbeatMs / 20);
    return liveTurn ? answer + this.#heartbeatMs : answer;
  }

  #foreignOwnerIsFresh(): boolean {
    const seen = this.#ownerSeen;
    return (
      seen !== undefined &&
      seen.tabId !== this.tabId &&
      this.#env.now() - seen.at < this.#heartbeatMs * FRESH_BEATS
    );
  }

  /** True when this tab owns the turn through the hold `letGo` gives up (not another grant's or claim's). */
  #holds(letGo: () => void): boolean {
    return this.#phase.type === 'owning' && this.#phase.letGo === letGo;
  }

  /** Moves along the table of `nextCoordinatorPhase`; a hold left behind is let go. */
  #move(event: CoordinatorEvent): void {
    const previous = this.#phase;
    this.#phase = nextCoordinatorPhase(previous, event);
    if ((previous.type === 'owning') === this.isOwner) return;
    for (const listener of [...this.#ownershipListeners]) listener();
    if (previous.type === 'owning') previous.letGo();
  }

  #post(message: TabMessage): void {
    if (this.#phase.type === 'disposed') return;
    try {
      this.#channel?.postMessage(message);
    } catch (error) {
      this.#env.warn(`could not post to the other tabs: ${String(error)}`);
    }
  }

  readonly #onChannelMessage = (event: MessageEvent): void => {
    const message = parseTabMessage(event.data);
    if (message === undefined || message.tabId === this.tabId) return;
    if (message.type === 'heartbeat' || message.type === 'turn-started') {
      this.#ownerSeen = { tabId: message.tabId, at: this.#env.now() };
      this.#move({ type: 'ownerHeard' });
    } else if (message.type === 'claim') {
      if (this.isOwner && this.mode === 'broadcast') this.#post({ type: 'heartbeat', tabId: this.tabId });
      this.#move({ type: 'rivalClaim', at: message.at, winsTie: message.tabId < this.tabId });
    } else if (message.type === 'released' && this.#ownerSeen?.tabId === message.tabId) {
      this.#ownerSeen = undefined;
      for (const wake of [...this.#naps]) wake();
    }
    for (const listener of [...this.#listeners]) listener(message);
  };
}
