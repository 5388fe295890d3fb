import { describe, expect, it } from 'vitest';
import { DEFAULT_LIVENESS_OPTIONS } from '../../src/client/liveness-options.js';
import type { RunCheck, SessionClient } from '../../src/client/session-client.js';
import { createSessionStore } from '../../src/client/session-store.js';
import { type GoneReason, TurnLiveness } from '../../src/transport/turn-liveness.js';
import { manualClock } from '../session/support/manual-clock.js';

/**
 * The liveness watch's state machine with the DEFAULT liveness options, on a clock the test
 * moves; the session row's answers are scripted (what `startSession` would report).
 */
function watch(answers: () => RunCheck['currentRunId']) {
  const clock = manualClock();
  const store = createSessionStore('chat');
  store.setState({ status: { type: 'streaming' } });
  let checks = 0;
  const client = {
    chatId: 'chat',
    store,
    environment: clock.environment,
    liveness: DEFAULT_LIVENESS_OPTIONS,
    checkRun: async (): Promise<RunCheck> => {
      checks++;
      return { currentRunId: answers() };
    },
  } as unknown as SessionClient;
  const gone: { reason: GoneReason; at: number }[] = [];
  const now = () => (clock.environment.now as () => number)();
  const liveness = new TurnLiveness(client, (reason) => gone.push({ reason, at: now() }));
  const started = now();
  /** Moves the clock in 100 ms steps, letting each check's promise settle. */
  const advance = async (ms: number) => {
    for (let moved = 0; moved < ms; moved += 100) {
      clock.advance(100);
      for (let tick = 0; tick < 5; tick++) await Promise.resolve();
    }
  };
  return { liveness, gone, advance, now, elapsed: () => now() - started, checks: () => checks, store };
}

describe('TurnLiveness (issue 18 items 3 and 4)', () => {
  it('item 3: a turn whose run changes (a continuation, an upgrade’s new run) is never ended while a run lives', async () => {
    let run: string | null = 'run_first';
    const { liveness, gone, advance, checks } = watch(() => run);
    liveness.connection(true);
    liveness.start();
    await advance(5_000); // first check: run_first lives
    expect(checks()).toBe(1);
    run = 'run_continuation'; // the first run ended cleanly; a continuation answers the turn
    await advance(60_000);
    expect(checks()).toBeGreaterThan(2);
    expect(gone).toEqual([]);
    liveness.stop();
  });

  it('item 3: still ends about 5 s after its last record when the row names no run', async () => {
    const { liveness, gone, advance, store } = watch(() => null);
    liveness.connection(true);
    liveness.start();
    await advance(4_000);
    expect(store.getState().status.type).toBe('waiting');
    await advance(3_000);
    expect(gone).toHaveLength(1);
    expect(gone[0]?.reason).toBe('run-gone');
  });

  it('item 4: a long poll that ends quickly (no connection open when the window closes) still confirms the verdict', async () => {
    const { liveness, gone, advance, elapsed } = watch(() => null);
    liveness.start();
    // A proxy closes idle SSE connections at once: the reader re-polls, each poll short.
    liveness.connection(true);
    liveness.connection(false);
    await advance(4_100); // the check: no run
    liveness.connection(true); // a short poll after the verdict, empty
    liveness.connection(false);
    await advance(2_000);
    expect(gone.map((entry) => entry.reason)).toEqual(['run-gone']);
    expect(elapsed()).toBeLessThanOrEqual(7_000);
  });

  it('never confirms while `.out` was unreadable since the verdict (offline): silence bounds it', async () => {
    const { liveness, gone, advance } = watch(() => null);
    liveness.start();
    await advance(10_000);
    expect(gone).toEqual([]);
  });

  it('records after the verdict void it; a stale check (records came while it ran) decides nothing', async () => {
    const { liveness, gone, advance, now } = watch(() => null);
    liveness.connection(true);
    liveness.start();
    await advance(4_100);
    liveness.activity(now()); // a record arrives: the turn is alive after all
    await advance(2_000);
    expect(gone).toEqual([]);
    liveness.stop();
  });
});
