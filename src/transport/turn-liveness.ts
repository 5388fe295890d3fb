import { inspectNote, isInspected } from '../client/inspection.js';
import type { SessionClient } from '../client/session-client.js';
import { isDurableChatError } from '../errors/durable-chat-error.js';

/** Why a silent turn was given up. */
export type GoneReason = 'run-gone' | 'silence';

/**
 * Where a live turn's watch stands. `lastActivityAt` (stamped per batch, the only hot-path
 * work) and one timer, re-armed lazily, drive it.
 *
 * - `quiet`: records arrived within `checkAfterMs`.
 * - `waiting`: silent; the session row is asked (through `startSession`) whether a run lives,
 *   every `interval` (3 s doubling to 30 s while one does).
 * - `confirming`: a check found no live run at `goneAt`; the verdict stands once `confirmMs`
 *   more passed with nothing arriving while `.out` was readable (`readSince`: a connection
 *   was open at the verdict or opened after it, so the server had nothing to send).
 * - `over`: ended (gone) or stopped; nothing more happens.
 */
type Phase =
  | { type: 'quiet' }
  | { type: 'waiting'; nextCheckAt: number; interval: number }
  | { type: 'confirming'; goneAt: number; readSince: boolean }
  | { type: 'over' };

/**
 * Watches one live turn for silence.
 *
 * | phase \ event | records arrive | timer: silent ≥ checkAfterMs | check: a run lives (any id) | check: no run (`null`) | check: no source / fails | timer: confirmMs passed, `.out` readable since | timer: silent ≥ maxSilenceMs (since a run was last seen) | connection opens |
 * |---------------|----------------|------------------------------|-----------------------------|------------------------|--------------------------|------------------------------------------------|----------------------------------------------------------|------------------|
 * | quiet         | quiet          | waiting, check now           | –                           | –                      | –                        | –                                              | –                                                        | –                |
 * | waiting       | quiet          | check when due               | waiting, interval ×2        | confirming             | waiting                  | –                                              | over (`silence`)                                         | –                |
 * | confirming    | quiet          | –                            | –                           | –                      | –                        | over (`run-gone`)                              | over (`silence`)                                         | `readSince`      |
 * | over          | –              | –                            | –                           | –                      | –                        | –                                              | –                                                        | –                |
 *
 * Any run counts as alive: runs change legitimately under a turn (a continuation that starts
 * after the run answering an earlier message ends, the run an upgrade hands over to), and a
 * new run replays `.in` past the last turn-complete, so it answers this turn too. A check
 * that started before records arrived is void. `stop()` leads to `over` from any phase.
 */
export class TurnLiveness {
  #phase: Phase = { type: 'quiet' };
  #lastActivityAt: number;
  /** When a check last found a live run: silence is bounded from here when checks say nothing. */
  #aliveAt: number;
  #timer: unknown;
  #checking = false;
  #connected = false;
  readonly #client: SessionClient;
  readonly #onGone: (reason: GoneReason, silentForMs: number) => void;

  constructor(client: SessionClient, onGone: (reason: GoneReason, silentForMs: number) => void) {
    this.#client = client;
    this.#onGone = onGone;
    const now = client.environment.now();
    this.#lastActivityAt = now;
    this.#aliveAt = now;
  }

  /** Starts watching (after the append was stored, or when a replay begins). */
  start(): void {
    if (this.#phase.type === 'over') return;
    this.#lastActivityAt = this.#client.environment.now();
    this.#arm(this.#client.liveness.checkAfterMs);
  }

  /** Batches of records arrived at `at`: the turn is not silent. */
  activity(at: number): void {
    this.#lastActivityAt = at;
    if (this.#phase.type === 'quiet' || this.#phase.type === 'over') return;
    this.#phase = { type: 'quiet' };
    this.#statusBack();
  }

  /** The turn's `.out` connection opened (`true`) or ended (`false`). */
  connection(open: boolean): void {
    this.#connected = open;
    if (open && this.#phase.type === 'confirming') this.#phase.readSince = true;
  }

  stop(): void {
    if (this.#phase.type === 'over') return;
    const wasWaiting = this.#phase.type !== 'quiet';
    this.#phase = { type: 'over' };
    this.#client.environment.clearTimeout(this.#timer);
    this.#timer = undefined;
    if (wasWaiting) this.#statusBack();
  }

  #statusBack(): void {
    const { store } = this.#client;
    if (store.getState().status.type === 'waiting') store.setState({ status: { type: 'streaming' } });
  }

  #arm(ms: number): void {
    const env = this.#client.environment;
    env.clearTimeout(this.#timer);
    this.#timer = env.setTimeout(() => this.#tick(), Math.max(0, ms));
  }

  #tick(): void {
    const phase = this.#phase;
    if (phase.type === 'over') return;
    const { liveness, environment: env, store } = this.#client;
    const now = env.now();
    const silentFor = now - this.#lastActivityAt;
    if (silentFor < liveness.checkAfterMs) {
      this.#arm(liveness.checkAfterMs - silentFor);
      return;
    }
    if (now - Math.max(this.#lastActivityAt, this.#aliveAt) >= liveness.maxSilenceMs) {
      this.#end('silence', silentFor);
      return;
    }
    if (phase.type === 'confirming') {
      if (phase.readSince && now - phase.goneAt >= liveness.confirmMs) {
        this.#end('run-gone', silentFor);
        return;
      }
    } else if (phase.type === 'quiet') {
      this.#phase = { type: 'waiting', nextCheckAt: now, interval: liveness.checkIntervalMs };
    }
    const status = store.getState().status;
    if (status.type === 'streaming' || status.type === 'waiting') {
      store.setState({
        status: { type: 'waiting', silentSince: this.#lastActivityAt, silentForMs: silentFor },
      });
    }
    const current = this.#phase;
    if (current.type === 'waiting' && !this.#checking && now >= current.nextCheckAt)
      void this.#check(current);
    // Once a second: the status's `silentForMs`, a due check, the confirmation window.
    this.#arm(1_000);
  }

  async #check(waiting: Phase & { type: 'waiting' }): Promise<void> {
    this.#checking = true;
    const { liveness, environment: env } = this.#client;
    const startedAt = env.now();
    let verdict: 'alive' | 'gone' | 'unknown' = 'unknown';
    try {
      const { currentRunId } = await this.#client.checkRun();
      if (currentRunId === null) verdict = 'gone';
      else if (currentRunId !== undefined) verdict = 'alive';
      if (isInspected()) {
        const note = { type: 'liveness-check', runId: currentRunId, verdict } as const;
        inspectNote(this.#client.chatId, note, env.now());
      }
    } catch (error) {
      // A closed session stops the reader through the client; anything else tells nothing.
      if (!isDurableChatError(error) || error.code !== 'SESSION_CLOSED') {
        env.warn(`chat ${this.#client.chatId}: the run liveness check failed: ${String(error)}`);
      }
    } finally {
      this.#checking = false;
    }
    // Records arrived while it was asked, or the watch moved on: the answer is stale.
    if (this.#phase !== waiting || this.#lastActivityAt > startedAt) return;
    const now = env.now();
    if (verdict === 'gone') {
      this.#phase = { type: 'confirming', goneAt: now, readSince: this.#connected };
      return;
    }
    if (verdict === 'alive') this.#aliveAt = now;
    waiting.nextCheckAt = now + waiting.interval;
    waiting.interval = Math.min(liveness.maxCheckIntervalMs, waiting.interval * 2);
  }

  #end(reason: GoneReason, silentForMs: number): void {
    this.stop();
    this.#onGone(reason, silentForMs);
  }
}
