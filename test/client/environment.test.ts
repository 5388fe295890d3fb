import { describe, expect, it } from 'vitest';
import { createWakeSource, randomPartId, resolveEnvironment, sleep } from '../../src/client/environment.js';

function manualTimers() {
  const pending = new Map<number, { callback: () => void; ms: number }>();
  let next = 0;
  return {
    pending,
    setTimeout: (callback: () => void, ms: number) => {
      pending.set(++next, { callback, ms });
      return next;
    },
    clearTimeout: (handle: unknown) => void pending.delete(handle as number),
    fire() {
      for (const [id, timer] of [...pending]) {
        pending.delete(id);
        timer.callback();
      }
    },
  };
}

describe('sleep', () => {
  it('resolves false when the timer fires, scheduling exactly the delay', async () => {
    const timers = manualTimers();
    const env = resolveEnvironment({ ...timers, onWake: createWakeSource().onWake });
    const done = sleep(env, 1234);
    expect([...timers.pending.values()].map((t) => t.ms)).toEqual([1234]);
    timers.fire();
    expect(await done).toBe(false);
  });

  it('ends early (true) on a wake event: online, visible again, bfcache pageshow', async () => {
    const timers = manualTimers();
    const wake = createWakeSource();
    const env = resolveEnvironment({ ...timers, onWake: wake.onWake });
    const done = sleep(env, 60_000);
    wake.wake();
    expect(await done).toBe(true);
    expect(timers.pending.size).toBe(0);
  });

  it('rejects with the abort reason and clears its timer', async () => {
    const timers = manualTimers();
    const env = resolveEnvironment({ ...timers, onWake: createWakeSource().onWake });
    const controller = new AbortController();
    const done = sleep(env, 60_000, controller.signal);
    controller.abort(new Error('stop'));
    await expect(done).rejects.toThrow('stop');
    expect(timers.pending.size).toBe(0);
  });

  it('wakes on browser events when window and document exist', async () => {
    const target = new EventTarget();
    const doc = Object.assign(new EventTarget(), { visibilityState: 'hidden' });
    const globals = globalThis as { window?: unknown; document?: unknown };
    globals.window = target;
    globals.document = doc;
    try {
      const env = resolveEnvironment({ ...manualTimers() });
      const woken: string[] = [];
      const off = env.onWake(() => woken.push('wake'));
      target.dispatchEvent(new Event('online'));
      doc.dispatchEvent(new Event('visibilitychange')); // still hidden: no wake
      doc.visibilityState = 'visible';
      doc.dispatchEvent(new Event('visibilitychange'));
      target.dispatchEvent(Object.assign(new Event('pageshow'), { persisted: false }));
      target.dispatchEvent(Object.assign(new Event('pageshow'), { persisted: true }));
      off();
      target.dispatchEvent(new Event('online'));
      expect(woken).toEqual(['wake', 'wake', 'wake']);
    } finally {
      delete globals.window;
      delete globals.document;
    }
  });
});

describe('randomPartId', () => {
  it('is 32 hex characters and unique', () => {
    const ids = new Set(Array.from({ length: 100 }, () => randomPartId()));
    expect(ids.size).toBe(100);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{32}$/);
  });
});

describe('resolveEnvironment sharing', () => {
  it('hands every client without overrides one shared host environment, and a fresh one with any', () => {
    const shared = resolveEnvironment();
    expect(resolveEnvironment({})).toBe(shared);
    expect(resolveEnvironment({ now: undefined })).toBe(shared);
    const now = () => 42;
    const own = resolveEnvironment({ now });
    expect(own).not.toBe(shared);
    expect(own.now()).toBe(42);
    expect(shared.now()).not.toBe(42);
  });
});
