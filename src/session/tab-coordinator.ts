import { type ClientEnvironment, randomPartId, sleep } from '../client/environment.js';
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
 * with neither, every tab acts alone (`none`). Also relays turn announcements.
 */
export class TabCoordinator {
  readonly tabId = randomPartId().slice(0, 16);
  readonly mode: TabMode;
  #owning = false;
  #disposed = false;
  readonly #locks: LockManagerLike | undefined;
  readonly #channel: BroadcastChannelLike | undefined;
  #releaseLock: (() => void) | undefined;
  readonly #listeners = new Set<(message: TabMessage) => void>();
  readonly #ownershipListeners = new Set<() => void>();
  /** Waits for ownership between two tries (see `#nap`). */
  readonly #naps = new Set<() => void>();
  #ownerSeen: { tabId: string; at: number } | undefined;
  #claim: { at: number; lost: boolean } | undefined;
  #heartbeat: unknown;
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
    return this.#owning;
  }

  /**
   * Tries to own the turn now; false when another tab owns it. `liveTurn`: a turn is known to
   * be live (found at load), so its owner may well be here: with the lease, the claim then
   * waits one heartbeat more (see `#claimWindowMs`).
   */
  async acquire(options: { liveTurn?: boolean } = {}): Promise<boolean> {
    if (this.#owning || this.mode === 'none') return true;
    if (this.mode === 'locks') return this.#requestLock({ ifAvailable: true });
    if (this.#foreignOwnerIsFresh()) return false;
    const claim = { at: this.#env.now(), lost: false };
    this.#claim = claim;
    this.#post({ type: 'claim', tabId: this.tabId, at: claim.at });
    await sleep(this.#env, this.#claimWindowMs(options.liveTurn === true));
    // A message that arrived while this tab's timer was late (its page was busy) is read before
    // it decides: the timer and the channel are separate task queues.
    await sleep(this.#env, 0);
    if (this.#claim === claim) this.#claim = undefined;
    if (claim.lost || this.#disposed) return false;
    this.#setOwning(true);
    const beat = () => {
      this.#post({ type: 'heartbeat', tabId: this.tabId });
      this.#heartbeat = this.#env.setTimeout(beat, this.#heartbeatMs);
    };
    beat();
    return true;
  }

  /** Resolves true once this tab owns the turn (the owner finished or went away); false if `signal` aborts first. */
  async waitForOwnership(signal: AbortSignal): Promise<boolean> {
    if (this.#owning || this.mode === 'none') return true;
    if (this.mode === 'locks') return this.#requestLock({ signal });
    while (!signal.aborted && !this.#disposed) {
      if (!this.#foreignOwnerIsFresh() && (await this.acquire())) return true;
      await this.#nap(signal);
    }
    return false;
  }

  /**
   * Waits a heartbeat, or less: an owner letting go (`released`) wakes the wait at once, so a
   * send waiting out a turn that ends within its grace is not refused for a beat still to come.
   */
  async #nap(signal: AbortSignal): Promise<void> {
    const nap = new AbortController();
    const wake = () => nap.abort();
    this.#naps.add(wake);
    signal.addEventListener('abort', wake);
    await sleep(this.#env, this.#heartbeatMs, nap.signal).catch(() => undefined);
    this.#naps.delete(wake);
    signal.removeEventListener('abort', wake);
  }

  release(): void {
    if (!this.#owning) return;
    this.#setOwning(false);
    this.#releaseLock?.();
    this.#releaseLock = undefined;
    if (this.#heartbeat !== undefined) this.#env.clearTimeout(this.#heartbeat);
    this.#heartbeat = undefined;
    if (this.mode === 'broadcast') this.#post({ type: 'released', tabId: this.tabId });
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
    this.release();
    this.#disposed = true;
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
          if (lock === null || this.#disposed || this.#owning) {
            resolve(this.#owning);
            return undefined;
          }
          this.#setOwning(true);
          resolve(true);
          // The lock is held until this promise settles: on release(), or when the tab dies.
          return new Promise<void>((done) => {
            this.#releaseLock = done;
          });
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

  #setOwning(owning: boolean): void {
    if (this.#owning === owning) return;
    this.#owning = owning;
    for (const listener of [...this.#ownershipListeners]) listener();
  }

  #post(message: TabMessage): void {
    if (this.#disposed) return;
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
      if (this.#claim !== undefined) this.#claim.lost = true;
    } else if (message.type === 'claim') {
      if (this.#owning && this.mode === 'broadcast') this.#post({ type: 'heartbeat', tabId: this.tabId });
      const mine = this.#claim;
      if (
        mine !== undefined &&
        (message.at < mine.at || (message.at === mine.at && message.tabId < this.tabId))
      ) {
        mine.lost = true;
      }
    } else if (message.type === 'released' && this.#ownerSeen?.tabId === message.tabId) {
      this.#ownerSeen = undefined;
      for (const wake of [...this.#naps]) wake();
    }
    for (const listener of [...this.#listeners]) listener(message);
  };
}
