import { describe, expect, it } from 'vitest';
import { createSessionStore, initialSessionState } from '../../src/client/session-store.js';
import type { TurnRecord } from '../../src/client/turn-records.js';

const liveTurn: TurnRecord = { id: 1, kind: 'message', state: 'stored', seq: 3, startCursor: 7 };

describe('session store writes', () => {
  it('merges a patch over the state, keeps the field order, and tells listeners once per write', () => {
    const store = createSessionStore('chat');
    const seen: [number | undefined, number | undefined][] = [];
    store.subscribe((next, previous) => seen.push([next.lastEventId, previous.lastEventId]));
    const before = store.getState();
    store.setState({ lastEventId: 4 });
    store.setState((state) => ({ lastEventId: (state.lastEventId ?? 0) + 1 }));
    const after = store.getState();
    expect(after).not.toBe(before);
    expect(after).toEqual({ ...initialSessionState('chat'), lastEventId: 5 });
    expect(Object.keys(after)).toEqual(Object.keys(initialSessionState('chat')));
    expect(seen).toEqual([
      [4, undefined],
      [5, 4],
    ]);
  });

  it('a write carries every other field over, as a plain object of the same keys', () => {
    const store = createSessionStore('chat');
    store.setState({
      sessionId: 'session_1',
      token: 'token',
      tokenExpiresAt: 10,
      lastEventId: 2,
      turns: [liveTurn],
      turnMessage: '{}',
      status: { type: 'streaming' },
      runId: 'run_1',
      closed: true,
      closedReason: 'done',
      hydrated: true,
    });
    const before = store.getState();
    store.setState({ lastEventId: 3 });
    const after = store.getState();
    expect(after).toStrictEqual({ ...before, lastEventId: 3 });
    expect(Object.getPrototypeOf(after)).toBe(Object.prototype);
    expect(Object.keys(after)).toEqual(Object.keys(initialSessionState('chat')));
  });

  it('reads the live mark from the turns, and ignores a write of the mark by hand', () => {
    const store = createSessionStore('chat');
    store.setState({ turns: [liveTurn] });
    expect(store.getState()).toMatchObject({ turnLive: true, turnStored: true, turnStartCursor: 7 });
    store.setState({ turnLive: false, lastEventId: 9 });
    expect(store.getState()).toMatchObject({ turnLive: true, lastEventId: 9 });
    store.setState({ turns: [] });
    expect(store.getState().turnLive).toBe(false);
  });

  it('keeps a field the state type does not have, on that write and every later one', () => {
    const store = createSessionStore('chat');
    store.setState({ extra: 1 } as never);
    store.setState({ lastEventId: 2 });
    expect(store.getState()).toMatchObject({ extra: 1, lastEventId: 2 });
  });

  it('replaces the state when asked, and later writes merge over the replacement', () => {
    const store = createSessionStore('chat');
    store.setState({ chatId: 'other', lastEventId: 1 } as never, true);
    store.setState({ hydrated: true });
    expect(store.getState()).toEqual({ chatId: 'other', lastEventId: 1, hydrated: true });
  });

  it('takes a `__proto__` key of a parsed patch as a field, never as the prototype', () => {
    const store = createSessionStore('chat');
    store.setState(JSON.parse('{"__proto__": {"polluted": true}, "lastEventId": 1}'));
    const state = store.getState();
    expect(Object.getPrototypeOf(state)).toBe(Object.prototype);
    expect((state as unknown as { polluted?: boolean }).polluted).toBeUndefined();
    expect(state.lastEventId).toBe(1);
  });
});
