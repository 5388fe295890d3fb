import { describe, expect, it } from 'vitest';
import { resolveEnvironment } from '../../src/client/environment.js';
import type { BroadcastChannelLike } from '../../src/session/tab-channel.js';
import { TabCoordinator } from '../../src/session/tab-coordinator.js';
import { manualClock } from './support/manual-clock.js';
import { memoryChannels } from './support/memory-channels.js';

/**
 * The BroadcastChannel lease at its default heartbeat (1000 ms), on a manual clock: every tab
 * of a test shares the clock and in-memory channels, and the test moves time in 10 ms steps.
 */
function lease() {
  const clock = manualClock();
  const env = resolveEnvironment(clock.environment);
  const channels = memoryChannels();
  let time = 0;
  const step = async () => {
    clock.advance(10);
    time += 10;
    // Lets the messages and the awaits the step set off run before the clock moves again.
    await new Promise((resolve) => setImmediate(resolve));
  };
  return {
    env,
    channels,
    clock,
    /** Options of a tab of the chat; `channel` replaces its channel (a busy page). */
    options: (channel: (name: string) => BroadcastChannelLike = channels) => ({
      locks: null,
      broadcastChannel: channel,
    }),
    /** A page busy for `delayMs` (a long render): it handles each channel message that late. */
    busyChannel:
      (delayMs: number) =>
      (name: string): BroadcastChannelLike => {
        const inner = channels(name);
        const late = new Map<unknown, (event: MessageEvent) => void>();
        return {
          postMessage: (message) => inner.postMessage(message),
          addEventListener: (type, listener) => {
            const delayed = (event: MessageEvent) => env.setTimeout(() => listener(event), delayMs);
            late.set(listener, delayed);
            inner.addEventListener(type, delayed);
          },
          removeEventListener: (type, listener) => {
            const delayed = late.get(listener);
            if (delayed !== undefined) inner.removeEventListener(type, delayed);
          },
          close: () => inner.close(),
        };
      },
    /** Moves the clock until `promise` settles (at most `maxMs`); its value and the clock time it took. */
    async settle<T>(promise: Promise<T>, maxMs = 5_000): Promise<{ value: T; tookMs: number }> {
      const started = time;
      let outcome: { value: T } | undefined;
      void promise.then((value) => {
        outcome = { value };
      });
      await new Promise((resolve) => setImmediate(resolve));
      while (outcome === undefined && time - started < maxMs) await step();
      if (outcome === undefined) throw new Error(`still pending after ${maxMs} ms of the clock`);
      return { value: outcome.value, tookMs: time - started };
    },
    /** Moves the clock `ms`. */
    async advance(ms: number) {
      for (let moved = 0; moved < ms; moved += 10) await step();
    },
  };
}

let chat = 0;
const chatId = () => `lease-${++chat}`;

describe('TabCoordinator, BroadcastChannel lease at the default heartbeat (manual clock)', () => {
  it('of two simultaneous claims exactly one wins; a live owner blocks; release hands over', async () => {
    const tabs = lease();
    const id = chatId();
    const a = new TabCoordinator(id, tabs.options(), tabs.env);
    const b = new TabCoordinator(id, tabs.options(), tabs.env);
    expect(a.mode).toBe('broadcast');
    const results = (await tabs.settle(Promise.all([a.acquire(), b.acquire()]))).value;
    expect(results.filter(Boolean)).toHaveLength(1);
    const [owner, other] = results[0] === true ? [a, b] : [b, a];
    expect((await tabs.settle(other.acquire())).value).toBe(false);
    const waiting = other.waitForOwnership(new AbortController().signal);
    owner.release();
    expect((await tabs.settle(waiting)).value).toBe(true);
    expect([owner.isOwner, other.isOwner]).toEqual([false, true]);
    a.dispose();
    b.dispose();
  });

  it('a tab that finds a live turn does not take it from an owner too busy to answer its claim at once', async () => {
    const tabs = lease();
    const id = chatId();
    const owner = new TabCoordinator(id, tabs.options(tabs.busyChannel(150)), tabs.env);
    expect((await tabs.settle(owner.acquire())).value).toBe(true);
    const reloaded = new TabCoordinator(id, tabs.options(), tabs.env);
    expect((await tabs.settle(reloaded.acquire({ liveTurn: true }))).value).toBe(false);
    expect([owner.isOwner, reloaded.isOwner]).toEqual([true, false]);
    // The owner going away for good (its page closed) hands the turn over.
    owner.dispose();
    expect((await tabs.settle(reloaded.waitForOwnership(new AbortController().signal))).value).toBe(true);
    reloaded.dispose();
  });

  /** An owner, and a second tab that waits for the turn (it heard the owner's beat: it naps a beat between tries). */
  async function ownerAndWaiter() {
    const tabs = lease();
    const id = chatId();
    const owner = new TabCoordinator(id, tabs.options(), tabs.env);
    const waiter = new TabCoordinator(id, tabs.options(), tabs.env);
    expect((await tabs.settle(owner.acquire())).value).toBe(true);
    const waiting = waiter.waitForOwnership(new AbortController().signal);
    await tabs.advance(100);
    return { tabs, owner, waiter, waiting };
  }

  it('a tab waiting for the turn gets it as soon as the owner lets go, not a beat later', async () => {
    const { tabs, owner, waiter, waiting } = await ownerAndWaiter();
    owner.release();
    const { value, tookMs } = await tabs.settle(waiting);
    expect(value).toBe(true);
    // A send waits 500 ms for an owner that is letting go (ACQUIRE_GRACE_MS); the next beat is 1 s away.
    expect(tookMs).toBeLessThan(500);
    owner.dispose();
    waiter.dispose();
  });

  it('a tab whose claim loses to an owner that lets go before the claim ends gets the turn then, not a beat later', async () => {
    const tabs = lease();
    const id = chatId();
    const waiter = new TabCoordinator(id, tabs.options(), tabs.env);
    // Another tab as the waiter hears it: it took the turn for a moment (a follow that found the
    // turn ended, see TabLife's takeOver); its beat and its release both arrive in the claim's window.
    const other = tabs.channels(`durable-chat:${id}`);
    const waiting = waiter.waitForOwnership(new AbortController().signal);
    await tabs.advance(10);
    other.postMessage({ type: 'heartbeat', tabId: 'other' });
    other.postMessage({ type: 'released', tabId: 'other' });
    const { value, tookMs } = await tabs.settle(waiting);
    expect(value).toBe(true);
    // A send waits 500 ms for an owner that is letting go (ACQUIRE_GRACE_MS); the next beat is 1 s away.
    expect(tookMs).toBeLessThan(500);
    other.close();
    waiter.dispose();
  });

  it('disposing a tab ends its wait for the turn at once, not after the beat it sleeps', async () => {
    const { tabs, owner, waiter, waiting } = await ownerAndWaiter();
    waiter.dispose();
    const { value, tookMs } = await tabs.settle(waiting);
    expect({ value, tookMs }).toEqual({ value: false, tookMs: 0 });
    owner.dispose();
  });

  it("a reload's claim and a send's in flight at once: one owner, whose beats stop when it lets go", async () => {
    const tabs = lease();
    const id = chatId();
    const tab = new TabCoordinator(id, tabs.options(), tabs.env);
    const heard: string[] = [];
    tabs.channels(`durable-chat:${id}`).addEventListener('message', (event) => heard.push(event.data.type));
    const follow = tab.acquire({ liveTurn: true });
    const send = tab.acquire();
    expect((await tabs.settle(Promise.all([follow, send]))).value).toEqual([true, true]);
    heard.length = 0;
    tab.release();
    await tabs.advance(3_000);
    expect(heard).toEqual(['released']);
    tab.dispose();
  });

  it("a send's claim still wins after a follow's claim of the same tab won and let go at once (the turn had ended: trailing)", async () => {
    const tabs = lease();
    const tab = new TabCoordinator(chatId(), tabs.options(), tabs.env);
    const follow = tab.acquire().then((won) => {
      if (won) tab.release();
      return won;
    });
    await tabs.advance(10);
    const send = tab.acquire();
    expect((await tabs.settle(Promise.all([follow, send]))).value).toEqual([true, true]);
    expect(tab.isOwner).toBe(true);
    tab.dispose();
  });

  it('a lone tab that finds a live turn owns it after one beat', async () => {
    const tabs = lease();
    const lone = new TabCoordinator(chatId(), tabs.options(), tabs.env);
    const { value, tookMs } = await tabs.settle(lone.acquire({ liveTurn: true }));
    expect(value).toBe(true);
    expect(tookMs).toBeGreaterThanOrEqual(1_000);
    lone.dispose();
  });
});
