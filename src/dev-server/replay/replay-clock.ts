import type { RecordedExchange } from '../../protocol/recording.js';

/** One timed piece of a recorded answer (its headers, a piece of its body, its end). */
export interface ReplayStep {
  /** Recorded ms (the recording's own clock). */
  at: number;
  run: () => void;
}

interface Playback {
  exchange: RecordedExchange;
  /** Its place in the recording: ties on `at` keep the recorded order. */
  order: number;
  arrivedAt: number;
  steps: readonly ReplayStep[];
  next: number;
}

/**
 * The recording's clock, played back: every answer's steps run when this clock reaches their
 * recorded time, so steps of different requests keep their recorded order (an append's answer
 * before or after a read's batch), and never sooner than their delay after their own request.
 *
 * The clock runs at `speed` but stops at the next recorded request the client has not sent
 * yet, until it comes: what the recorded server sent after a request (the reply to a message)
 * must not reach the client before that request is even made, which a client running late
 * under load would otherwise see. A request that has not come `requestWaitMs` after a step
 * began waiting for it is given up (the client went elsewhere), and the clock plays on.
 */
export class ReplayClock {
  /** Recorded ms the clock showed at `realAt`; undefined until the first request. */
  private virtual: number | undefined;
  private realAt = 0;
  /** Recorded requests in recorded order; `pending` is the first that has not come. */
  private readonly expected: RecordedExchange[];
  private pending = 0;
  private readonly arrived = new Set<RecordedExchange>();
  private readonly playing = new Set<Playback>();
  private waitingSince: number | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;

  constructor(
    exchanges: readonly RecordedExchange[],
    private readonly speed: number,
    private readonly requestWaitMs: number,
    private readonly onGiveUp: (exchange: RecordedExchange) => void,
  ) {
    this.expected = [...exchanges].sort((a, b) => a.at - b.at);
  }

  /**
   * The recorded `exchange`'s request came: its steps play from now on the recording's clock.
   * Returns a function that cancels the steps not yet run (the client left).
   */
  play(exchange: RecordedExchange, order: number, steps: readonly ReplayStep[]): () => void {
    const now = Date.now();
    this.rebase(now);
    if (this.virtual === undefined) {
      this.virtual = exchange.at;
      this.realAt = now;
    }
    this.arrived.add(exchange);
    this.advancePending();
    const playback: Playback = { exchange, order, arrivedAt: now, steps, next: 0 };
    this.playing.add(playback);
    this.tick();
    return () => {
      this.playing.delete(playback);
      this.tick();
    };
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.playing.clear();
  }

  /** The recorded time of the first request that has not come (Infinity: none left). */
  private barrier(): number {
    return this.expected[this.pending]?.at ?? Number.POSITIVE_INFINITY;
  }

  private clockAt(real: number): number {
    if (this.virtual === undefined) return Number.NEGATIVE_INFINITY;
    const run =
      this.speed === Number.POSITIVE_INFINITY ? Number.POSITIVE_INFINITY : (real - this.realAt) * this.speed;
    return Math.min(this.virtual + run, Math.max(this.virtual, this.barrier()));
  }

  /** Fixes the clock's reading at `real`, before the barrier moves (the clock resumes from there). */
  private rebase(real: number): void {
    if (this.virtual === undefined) return;
    // Infinity once no recorded request is left to wait for at `speed` Infinity: every step is due.
    this.virtual = this.clockAt(real);
    this.realAt = real;
  }

  private advancePending(): void {
    while (
      this.pending < this.expected.length &&
      this.arrived.has(this.expected[this.pending] as RecordedExchange)
    )
      this.pending++;
  }

  /** When `playback`'s next step may run, in real ms (Infinity: not until a request comes). */
  private dueAt(playback: Playback, step: ReplayStep): number {
    const own = playback.arrivedAt + Math.max(0, step.at - playback.exchange.at) / this.speed;
    if (this.virtual === undefined || step.at > Math.max(this.virtual, this.barrier()))
      return Number.POSITIVE_INFINITY;
    const clock = this.realAt + Math.max(0, step.at - this.virtual) / this.speed;
    return Math.max(own, clock);
  }

  /** Runs every step that is due, in recorded order, then waits for the next one. */
  private tick(): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    for (;;) {
      const now = Date.now();
      let first: { playback: Playback; step: ReplayStep } | undefined;
      for (const playback of this.playing) {
        const step = playback.steps[playback.next];
        if (step === undefined) continue;
        if (
          first === undefined ||
          step.at < first.step.at ||
          (step.at === first.step.at && playback.order < first.playback.order)
        )
          first = { playback, step };
      }
      if (first === undefined) {
        this.waitingSince = undefined;
        return;
      }
      const due = this.dueAt(first.playback, first.step);
      if (due > now) {
        this.wait(due, now);
        return;
      }
      this.waitingSince = undefined;
      first.playback.next++;
      if (first.playback.next >= first.playback.steps.length) this.playing.delete(first.playback);
      first.step.run();
    }
  }

  private wait(due: number, now: number): void {
    let until = due;
    if (due !== Number.POSITIVE_INFINITY) this.waitingSince = undefined;
    else if (this.virtual !== undefined) {
      const barrier = this.barrier();
      // Still running towards the request: the wait for it starts once the clock gets there.
      const reaches = this.realAt + Math.max(0, barrier - this.virtual) / this.speed;
      if (reaches > now) until = reaches;
      else {
        this.waitingSince ??= now;
        until = this.waitingSince + this.requestWaitMs;
        if (until <= now) {
          this.giveUp(now);
          until = now;
        }
      }
    }
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.tick(), Math.max(0, until - now));
  }

  /**
   * Plays on without the requests the clock waited for: the first one, and every other one
   * recorded no later than the clock shows (a client that started mid-recording, or skipped
   * a few, would otherwise cost a wait each).
   */
  private giveUp(now: number): void {
    const reading = this.clockAt(now);
    this.rebase(now);
    const missing: RecordedExchange[] = [];
    for (
      let exchange = this.expected[this.pending];
      exchange !== undefined;
      exchange = this.expected[this.pending]
    ) {
      if (!this.arrived.has(exchange)) {
        if (missing.length > 0 && exchange.at > reading) break;
        missing.push(exchange);
      }
      this.pending++;
    }
    this.waitingSince = undefined;
    for (const exchange of missing) this.onGiveUp(exchange);
  }
}
