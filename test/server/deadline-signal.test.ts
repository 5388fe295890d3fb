import { afterEach, describe, expect, it, vi } from 'vitest';
import { deadlineSignal } from '../../src/server/deadline-signal.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('deadlineSignal (AbortSignal.any and .timeout without either)', () => {
  it('aborts with the caller, carrying the caller’s reason, and is not a timeout', () => {
    const caller = new AbortController();
    const deadline = deadlineSignal(30_000, caller.signal);
    caller.abort(new Error('user left'));
    expect(deadline.signal.aborted).toBe(true);
    expect((deadline.signal.reason as Error).message).toBe('user left');
    expect(deadline.timedOut).toBe(false);
    deadline.dispose();
  });

  it('starts aborted when the caller already is', () => {
    const caller = new AbortController();
    caller.abort();
    expect(deadlineSignal(30_000, caller.signal).signal.aborted).toBe(true);
  });

  it('aborts at the deadline as a TimeoutError', () => {
    vi.useFakeTimers();
    const deadline = deadlineSignal(30_000, undefined);
    vi.advanceTimersByTime(29_999);
    expect(deadline.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(deadline.signal.aborted).toBe(true);
    expect(deadline.timedOut).toBe(true);
    expect((deadline.signal.reason as DOMException).name).toBe('TimeoutError');
  });

  it('after dispose, neither the caller nor the clock reaches it, and no listener is left', () => {
    vi.useFakeTimers();
    const caller = new AbortController();
    const added = vi.spyOn(caller.signal, 'addEventListener');
    const removed = vi.spyOn(caller.signal, 'removeEventListener');
    const deadline = deadlineSignal(30_000, caller.signal);
    deadline.dispose();
    expect(removed).toHaveBeenCalledWith('abort', added.mock.calls[0]?.[1]);
    caller.abort();
    vi.advanceTimersByTime(60_000);
    expect(deadline.signal.aborted).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });
});
