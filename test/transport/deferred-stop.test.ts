import { describe, expect, it } from 'vitest';
import { listenForAbort } from '../../src/client/environment.js';
import { DeferredStop } from '../../src/transport/deferred-stop.js';

function manualTimers() {
  const pending = new Map<number, () => void>();
  let next = 0;
  return {
    pending,
    setTimeout: (callback: () => void) => {
      pending.set(++next, callback);
      return next;
    },
    clearTimeout: (handle: unknown) => void pending.delete(handle as number),
    tick() {
      for (const [id, callback] of [...pending]) {
        pending.delete(id);
        callback();
      }
    },
  };
}

describe('DeferredStop', () => {
  it('sends on the next tick', () => {
    const timers = manualTimers();
    const stop = new DeferredStop(timers);
    const sent: string[] = [];
    stop.schedule(() => sent.push('stop'));
    expect(sent).toEqual([]);
    timers.tick();
    expect(sent).toEqual(['stop']);
  });

  it('a cancel in the same tick (a disconnect) means nothing is sent', () => {
    const timers = manualTimers();
    const stop = new DeferredStop(timers);
    const sent: string[] = [];
    stop.schedule(() => sent.push('stop'));
    stop.cancel();
    timers.tick();
    expect(sent).toEqual([]);
    expect(timers.pending.size).toBe(0);
  });

  it('flush sends a scheduled stop at once, exactly once', () => {
    const timers = manualTimers();
    const stop = new DeferredStop(timers);
    const sent: string[] = [];
    stop.schedule(() => sent.push('first'));
    stop.flush();
    stop.flush();
    timers.tick();
    expect(sent).toEqual(['first']);
  });

  it('scheduling again sends the earlier stop first', () => {
    const timers = manualTimers();
    const stop = new DeferredStop(timers);
    const sent: string[] = [];
    stop.schedule(() => sent.push('first'));
    stop.schedule(() => sent.push('second'));
    expect(sent).toEqual(['first']);
    timers.tick();
    expect(sent).toEqual(['first', 'second']);
  });
});

describe('listenForAbort', () => {
  it('fires once on abort, at once when already aborted, never without a signal', () => {
    const calls: string[] = [];
    const controller = new AbortController();
    listenForAbort(controller.signal, () => calls.push('live'));
    controller.abort();
    controller.abort();
    listenForAbort(AbortSignal.abort(), () => calls.push('already'));
    listenForAbort(undefined, () => calls.push('never'));
    expect(calls).toEqual(['live', 'already']);
  });
});
