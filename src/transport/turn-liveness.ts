import type { SessionClient } from '../client/session-client.js';
import { isDurableChatError } from '../errors/durable-chat-error.js';

/** Why a silent turn was given up. */
export type GoneReason = 'run-gone' | 'silence';

/**
 * Watches one live turn for silence. The hot path only stamps `lastActivityAt` per batch;
 * one timer, re-armed lazily, does the rest:
 *
 * | state \ event   | record arrives        | silence ≥ checkAfterMs      | check: run alive      | check: run gone (null / another run) | check: no source / fails | confirmMs passed, connected, still silent |
 * |-----------------|-----------------------|-----------------------------|-----------------------|--------------------------------------|--------------------------|-------------------------------------------|
 * | quiet           | quiet (stamp)         | waiting (status), check     | –                     | –                                    | –                        | –                                         |
 * | waiting         | quiet (status back)   | check when due              | waiting, next check ×2| confirming                           | waiting; past maxSilenceMs → gone | –                                 |
 * | confirming      | quiet (verdict void)  | –                           | –                     | –                                    | –                        | gone (`onGone('run-gone')`)               |
 *
 * `stop()` releases the timer from any state. The run a turn waits for is the first one a
 * check names; an `upgrade-required` record forgets it (the server swapped the run).
 */
export class TurnLiveness {
  private lastActivityAt: number;
  private timer: unknown;
  private stopped = false;
  private checking = false;
  private knownRun: string | undefined;
  private nextCheckAt: number | undefined;
  private interval: number;
  private goneAt: number | undefined;
  private aliveAt: number;
  private connected = false;
  private waiting = false;

  constructor(
    private readonly client: SessionClient,
    private readonly onGone: (reason: GoneReason, silentForMs: number) => void,
  ) {
    const now = client.environment.now();
    this.lastActivityAt = now;
    this.aliveAt = now;
    this.interval = client.liveness.checkIntervalMs;
  }

  /** Starts watching (after the append was stored, or when a replay begins). */
  start(): void {
    if (this.stopped) return;
    this.lastActivityAt = this.client.environment.now();
    this.arm(this.client.liveness.checkAfterMs);
  }

  /** Batches of records arrived at `at`: the turn is not silent. */
  activity(at: number): void {
    this.lastActivityAt = at;
    this.goneAt = undefined;
    if (this.waiting) {
      this.waiting = false;
      this.nextCheckAt = undefined;
      this.interval = this.client.liveness.checkIntervalMs;
      const status = this.client.store.getState().status;
      if (status.type === 'waiting') this.client.store.setState({ status: { type: 'streaming' } });
    }
  }

  connection(open: boolean): void {
    this.connected = open;
  }

  /** The server swapped the run: the next check names the turn's new run. */
  upgraded(): void {
    this.knownRun = undefined;
  }

  stop(): void {
    this.stopped = true;
    this.client.environment.clearTimeout(this.timer);
    this.timer = undefined;
    if (this.waiting) {
      this.waiting = false;
      const status = this.client.store.getState().status;
      if (status.type === 'waiting') this.client.store.setState({ status: { type: 'streaming' } });
    }
  }

  private arm(ms: number): void {
    const env = this.client.environment;
    env.clearTimeout(this.timer);
    this.timer = env.setTimeout(() => this.tick(), Math.max(0, ms));
  }

  private tick(): void {
    if (this.stopped) return;
    const { liveness, environment: env, store } = this.client;
    const now = env.now();
    const silentFor = now - this.lastActivityAt;
    if (silentFor < liveness.checkAfterMs) {
      this.arm(liveness.checkAfterMs - silentFor);
      return;
    }
    if (this.goneAt !== undefined && this.goneAt >= this.lastActivityAt) {
      if (this.connected && now - this.goneAt >= liveness.confirmMs) {
        this.end('run-gone', silentFor);
        return;
      }
    }
    if (now - Math.max(this.lastActivityAt, this.aliveAt) >= liveness.maxSilenceMs) {
      this.end('silence', silentFor);
      return;
    }
    this.waiting = true;
    const status = store.getState().status;
    if (status.type === 'streaming' || status.type === 'waiting') {
      store.setState({
        status: { type: 'waiting', silentSince: this.lastActivityAt, silentForMs: silentFor },
      });
    }
    this.nextCheckAt ??= now;
    if (!this.checking && this.goneAt === undefined && now >= this.nextCheckAt) void this.check();
    // Once a second: the status's `silentForMs`, a due check, the confirmation window.
    this.arm(1_000);
  }

  private async check(): Promise<void> {
    this.checking = true;
    const { liveness, environment: env } = this.client;
    const startedAt = env.now();
    try {
      const { currentRunId } = await this.client.checkRun();
      if (this.stopped || this.lastActivityAt > startedAt) return;
      if (currentRunId === undefined) return; // no source: the silence bound decides
      if (currentRunId !== null && (this.knownRun === undefined || this.knownRun === currentRunId)) {
        this.knownRun = currentRunId;
        this.aliveAt = env.now();
        return;
      }
      this.goneAt = env.now();
    } catch (error) {
      // A closed session stops the reader through the client; anything else tells nothing.
      if (!isDurableChatError(error) || error.code !== 'SESSION_CLOSED') {
        env.warn(`could not check whether chat ${this.client.chatId}'s agent run lives: ${String(error)}`);
      }
    } finally {
      this.checking = false;
      this.nextCheckAt = env.now() + this.interval;
      this.interval = Math.min(liveness.maxCheckIntervalMs, this.interval * 2);
    }
  }

  private end(reason: GoneReason, silentForMs: number): void {
    this.stop();
    this.onGone(reason, silentForMs);
  }
}
