import { describe, expect, it } from 'vitest';
import { type ClientEnvironment, resolveEnvironment } from '../../src/client/environment.js';
import { fetchWithTimeout, mergeHeaders } from '../../src/client/http.js';

describe('mergeHeaders', () => {
  it("hands the library's own header record to fetch as is when nothing else is set", () => {
    const own = { authorization: 'Bearer t', accept: 'text/event-stream' };
    expect(mergeHeaders(undefined, undefined, own)).toBe(own);
  });

  it('merges app headers under the library ones, case-insensitively, later sources winning', () => {
    const merged = new Headers(
      mergeHeaders({ 'X-App': 'a', Authorization: 'app' }, () => ({ 'x-call': 'c' }), {
        authorization: 'Bearer t',
      }),
    );
    expect(Object.fromEntries(merged)).toEqual({ authorization: 'Bearer t', 'x-app': 'a', 'x-call': 'c' });
    // A lone Headers or function source is still turned into a Headers object.
    expect(mergeHeaders(undefined, new Headers({ a: '1' }))).toBeInstanceOf(Headers);
    expect(mergeHeaders(() => ({ a: '1' }))).toBeInstanceOf(Headers);
  });
});

/** An environment whose timers fire only when the test says so, and whose fetch waits for its signal. */
function manualEnvironment() {
  const timers = new Map<number, () => void>();
  let next = 0;
  const signals: AbortSignal[] = [];
  const env: ClientEnvironment = resolveEnvironment({
    setTimeout: (callback) => {
      timers.set(++next, callback);
      return next;
    },
    clearTimeout: (handle) => {
      timers.delete(handle as number);
    },
    fetch: (_input, init) =>
      new Promise<Response>((_resolve, reject) => {
        const signal = init?.signal as AbortSignal;
        signals.push(signal);
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      }),
  });
  const fire = () => {
    for (const [handle, callback] of [...timers]) {
      timers.delete(handle);
      callback();
    }
  };
  return { env, fire, signals, pendingTimers: () => timers.size };
}

describe('fetchWithTimeout', () => {
  it('aborts the controller the caller owns on timeout, without chaining another to it', async () => {
    const { env, fire, signals } = manualEnvironment();
    const owned = new AbortController();
    const pending = fetchWithTimeout(env, 'http://x/out', { signal: owned.signal }, 1000, 'read .out', owned);
    expect(signals).toEqual([owned.signal]);
    fire();
    await expect(pending).rejects.toMatchObject({ code: 'NETWORK_ERROR', message: /within 1000 ms/ });
    expect(owned.signal.aborted).toBe(true);
  });

  it('an abort by the owner is not reported as a timeout, and the timer is released', async () => {
    const { env, signals, pendingTimers } = manualEnvironment();
    const owned = new AbortController();
    const pending = fetchWithTimeout(env, 'http://x/out', { signal: owned.signal }, 1000, 'read .out', owned);
    owned.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(signals).toHaveLength(1);
    expect(pendingTimers()).toBe(0);
  });

  it('without an owned controller, chains one to the caller signal and times out on its own', async () => {
    const { env, fire, signals } = manualEnvironment();
    const outer = new AbortController();
    const pending = fetchWithTimeout(env, 'http://x/append', { signal: outer.signal }, 500, 'append to .in');
    expect(signals[0]).not.toBe(outer.signal);
    fire();
    await expect(pending).rejects.toMatchObject({ code: 'NETWORK_ERROR', message: /within 500 ms/ });
    expect(outer.signal.aborted).toBe(false);
    const second = fetchWithTimeout(env, 'http://x/append', { signal: outer.signal }, 500, 'append to .in');
    outer.abort();
    await expect(second).rejects.toMatchObject({ name: 'AbortError' });
  });
});
