import type { ClientEnvironment } from '../../../src/client/environment.js';

/**
 * The session's clock, moved by the test: `now()` stands still and timers fire only when
 * `advance` passes their time. The network stays real.
 */
export function manualClock(): { environment: Partial<ClientEnvironment>; advance(ms: number): void } {
  let now = 1_000_000;
  let nextId = 0;
  const timers = new Map<number, { at: number; run: () => void }>();
  return {
    environment: {
      warn: () => {},
      now: () => now,
      setTimeout: (run, ms) => {
        nextId += 1;
        timers.set(nextId, { at: now + ms, run });
        return nextId;
      },
      clearTimeout: (handle) => {
        timers.delete(handle as number);
      },
    },
    advance(ms) {
      now += ms;
      const due = [...timers].filter(([, timer]) => timer.at <= now).sort(([, a], [, b]) => a.at - b.at);
      for (const [id, timer] of due) {
        timers.delete(id);
        timer.run();
      }
    },
  };
}
