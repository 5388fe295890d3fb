import { describe, expect, it } from 'vitest';
import { createSessionStore } from '../../src/client/session-store.js';
import { TokenManager, type TokenSource } from '../../src/client/token-manager.js';

function jwt(claims: Record<string, unknown>): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode(claims)}.c2lnbmF0dXJl`;
}

function setup(options: { now?: number; tokens?: string[]; fail?: unknown } = {}) {
  const store = createSessionStore('c1');
  let now = options.now ?? 1_000_000;
  const issued = [...(options.tokens ?? [])];
  let calls = 0;
  const refreshed: TokenSource[] = [];
  const manager = new TokenManager({
    store,
    now: () => now,
    fetchToken: async () => {
      calls++;
      await new Promise((resolve) => setTimeout(resolve, 5));
      if (options.fail !== undefined) throw options.fail;
      const token = issued.shift();
      if (token === undefined) throw new Error('no more tokens');
      return token;
    },
    onRefreshed: (source) => refreshed.push(source),
  });
  return {
    store,
    manager,
    refreshed,
    calls: () => calls,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe('TokenManager', () => {
  it('reads exp and the run id from the JWT payload without verifying it', () => {
    const { manager, store } = setup();
    manager.adopt(
      jwt({ exp: 2_000, iat: 1_000, scopes: ['read:sessions:c1', 'read:runs:run_42'] }),
      'turn-complete',
    );
    expect(store.getState().tokenExpiresAt).toBe(2_000_000);
    expect(store.getState().runId).toBe('run_42');
  });

  it('keeps the last known run id when a token has no run scope', () => {
    const { manager, store } = setup();
    manager.adopt(jwt({ scopes: ['read:runs:run_1'] }), 'session-start');
    manager.adopt(jwt({ scopes: ['read:sessions:c1'] }), 'turn-complete');
    expect(store.getState().runId).toBe('run_1');
  });

  it('returns the stored token while it is fresh, and refreshes inside the window before exp', async () => {
    const fresh = jwt({ iat: 1_000, exp: 4_600 });
    const { manager, advance, calls, refreshed } = setup({ now: 1_000_000, tokens: ['next.token.x'] });
    manager.adopt(fresh, 'session-start');
    expect(await manager.get()).toBe(fresh);
    advance(3_600_000 - 30_000);
    expect(await manager.get()).toBe('next.token.x');
    expect(calls()).toBe(1);
    expect(refreshed).toEqual(['expiry']);
  });

  it('uses a tenth of a short lifetime as the refresh window', async () => {
    const { manager, advance } = setup({ now: 1_000_000, tokens: ['b.b.b'] });
    manager.adopt(jwt({ iat: 1_000, exp: 1_010 }), 'session-start');
    advance(8_999);
    expect(manager.needsRefresh()).toBe(false);
    advance(1);
    expect(manager.needsRefresh()).toBe(true);
  });

  it('shares one refresh between concurrent callers (single flight)', async () => {
    const { manager, calls } = setup({ tokens: ['one.one.one', 'two.two.two'] });
    const results = await Promise.all([
      manager.refresh('unauthorized'),
      manager.refresh('unauthorized'),
      manager.get(),
    ]);
    expect(results).toEqual(['one.one.one', 'one.one.one', 'one.one.one']);
    expect(calls()).toBe(1);
    expect(await manager.refresh('unauthorized')).toBe('two.two.two');
  });

  it('wraps a failing app callback in TOKEN_UNAVAILABLE without its text in the message', async () => {
    const { manager } = setup({ fail: new Error('secret-ish detail') });
    const error = await manager.refresh('expiry').catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'TOKEN_UNAVAILABLE' });
    expect((error as Error).message).not.toContain('secret-ish');
    expect((error as Error).cause).toBeInstanceOf(Error);
  });

  it('rejects an empty token from the callback', async () => {
    const { manager } = setup({ tokens: [''] });
    await expect(manager.refresh('expiry')).rejects.toMatchObject({ code: 'TOKEN_UNAVAILABLE' });
  });

  it('treats a token without exp as valid until the server refuses it', () => {
    const { manager } = setup();
    manager.adopt('opaque-token', 'session-start');
    expect(manager.needsRefresh()).toBe(false);
  });
});
