import type { ClientEnvironment } from '../../../src/client/environment.js';

/**
 * A clock for the client's `environment` that runs with real time but can be pushed
 * forward: `advance(ms)` moves it in steps, firing every timer that falls due, while the
 * real network, server and agent keep their own pace between steps. Tests keep the
 * library's default timeouts and still see minutes pass in a second or two.
 */
export interface VirtualClock {
  environment: Pick<ClientEnvironment, 'now' | 'setTimeout' | 'clearTimeout'>;
  now(): number;
  /** Moves the clock `ms` forward in steps of `stepMs`, yielding `realMsPerStep` of real time per step. */
  advance(ms: number, options?: { stepMs?: number; realMsPerStep?: number }): Promise<void>;
  /** Advances until `check` holds or `maxMs` of clock time passed; returns the clock time spent. */
  advanceUntil(
    check: () => boolean,
    maxMs: number,
    options?: { stepMs?: number; realMsPerStep?: number },
  ): Promise<number>;
}

interface Timer {
  at: number;
  callback: () => void;
  handle: ReturnType<typeof setTimeout>;
}

export function virtualClock(): VirtualClock {
  let offset = 0;
  let nextId = 1;
  const timers = new Map<number, Timer>();
  const now = () => Date.now() + offset;
  const fire = (id: number) => {
    const timer = timers.get(id);
    if (timer === undefined) return;
    timers.delete(id);
    timer.callback();
  };
  const environment: VirtualClock['environment'] = {
    now,
    setTimeout(callback, ms) {
      const id = nextId++;
      const at = now() + ms;
      timers.set(id, { at, callback, handle: setTimeout(() => fire(id), Math.max(0, ms)) });
      return id;
    },
    clearTimeout(id) {
      const timer = timers.get(id as number);
      if (timer === undefined) return;
      clearTimeout(timer.handle);
      timers.delete(id as number);
    },
  };
  const fireDue = () => {
    for (;;) {
      const due = [...timers.entries()]
        .filter(([, timer]) => timer.at <= now())
        .sort((a, b) => a[1].at - b[1].at);
      if (due.length === 0) break;
      for (const [id, timer] of due) {
        clearTimeout(timer.handle);
        fire(id);
      }
    }
    // What is left runs on real time from the new "now".
    for (const [id, timer] of timers) {
      clearTimeout(timer.handle);
      timer.handle = setTimeout(() => fire(id), Math.max(0, timer.at - now()));
    }
  };
  const step = async (ms: number, realMs: number) => {
    offset += ms;
    fireDue();
    await new Promise((resolve) => setTimeout(resolve, realMs));
  };
  return {
    environment,
    now,
    async advance(ms, { stepMs = 500, realMsPerStep = 10 } = {}) {
      let left = ms;
      while (left > 0) {
        const next = Math.min(stepMs, left);
        await step(next, realMsPerStep);
        left -= next;
      }
    },
    async advanceUntil(check, maxMs, { stepMs = 250, realMsPerStep = 10 } = {}) {
      let spent = 0;
      while (!check() && spent < maxMs) {
        await step(stepMs, realMsPerStep);
        spent += stepMs;
      }
      return spent;
    },
  };
}
