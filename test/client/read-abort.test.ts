import { describe, expect, it } from 'vitest';
import { createWakeSource, sleep } from '../../src/client/environment.js';
import { ReadAbort } from '../../src/client/read-abort.js';

describe('ReadAbort (what a turn stream holds instead of an AbortController)', () => {
  it('runs each listener once, not a removed one, and none added after the abort', () => {
    const handle = new ReadAbort();
    const calls: string[] = [];
    const removed = () => calls.push('removed');
    handle.addEventListener('abort', () => calls.push('first'));
    handle.addEventListener('abort', removed);
    handle.addEventListener('abort', () => calls.push(`second:${String(handle.reason)}`));
    handle.removeEventListener('abort', removed);
    handle.abort('why');
    handle.abort('again');
    handle.addEventListener('abort', () => calls.push('late'));
    expect(calls).toEqual(['first', 'second:why']);
    expect(handle.aborted).toBe(true);
    expect(handle.reason).toBe('why');
  });

  it('without a reason aborts with an AbortError, as AbortController.abort() does', () => {
    const handle = new ReadAbort();
    handle.abort();
    expect(handle.reason).toBeInstanceOf(DOMException);
    expect((handle.reason as DOMException).name).toBe('AbortError');
  });

  it("ends a backoff's sleep with its reason", async () => {
    const handle = new ReadAbort();
    const env = {
      setTimeout: (callback: () => void, ms: number) => globalThis.setTimeout(callback, ms),
      clearTimeout: (timer: unknown) => globalThis.clearTimeout(timer as ReturnType<typeof setTimeout>),
      onWake: createWakeSource().onWake,
    };
    const slept = sleep(env as never, 60_000, handle);
    handle.abort('stopped');
    await expect(slept).rejects.toBe('stopped');
  });
});
