import { ConnectionError } from '../errors/connection-error.js';
import { isDurableChatError } from '../errors/durable-chat-error.js';
import { readTokenClaims, runIdFromScopes } from '../protocol/token-claims.js';
import type { SessionStore } from './session-store.js';

const CLOCK_SKEW_SIGNIFICANT_MS = 5_000;

/** Why a token was replaced, as reported in the `token-refreshed` event. */
export type TokenSource = 'session-start' | 'expiry' | 'unauthorized' | 'turn-complete' | 'manual';

export interface TokenManagerOptions {
  store: SessionStore;
  now: () => number;
  /** Fetches a fresh token from the app (its `getAccessToken`, or `startSession` again). */
  fetchToken: () => Promise<string>;
  onRefreshed?: (source: TokenSource) => void;
  /** Refresh this long before `exp`. Default: 30 s, or a tenth of the lifetime if shorter. */
  refreshSkewMs?: number;
}

/**
 * Owns the session token: adopts tokens from any source, refreshes ahead of expiry and on
 * 401/403, and makes concurrent callers share one refresh. Tokens are opaque here except
 * for `exp` and `scopes`, read (never verified) from the JWT payload.
 */
export class TokenManager {
  #inFlight: Promise<string> | undefined;
  #issuedAt: number | undefined;
  /** This clock minus the server's, learned from a fresh token's `iat` (0 when within 2 s). */
  #skewMs = 0;
  readonly #options: TokenManagerOptions;

  constructor(options: TokenManagerOptions) {
    this.#options = options;
  }

  /**
   * Stores `token` with its expiry and run id. A `fresh` token was just minted (not restored
   * from storage): its `iat` is the server's clock now, which tells this clock's skew.
   */
  adopt(token: string, source: TokenSource, fresh = true): void {
    const claims = readTokenClaims(token);
    const now = this.#options.now();
    if (fresh && claims?.iat !== undefined) {
      const skew = now - claims.iat * 1000;
      // `iat` has a one-second resolution and the token took a round trip to arrive.
      this.#skewMs = Math.abs(skew) > CLOCK_SKEW_SIGNIFICANT_MS ? skew : 0;
    }
    this.#issuedAt = claims?.iat === undefined ? now - this.#skewMs : claims.iat * 1000;
    const runId = runIdFromScopes(claims?.scopes);
    const state = this.#options.store.getState();
    if (state.token === token) return;
    this.#options.store.setState({
      token,
      tokenExpiresAt: claims?.exp === undefined ? undefined : claims.exp * 1000,
      runId: runId ?? state.runId,
    });
    if (source !== 'session-start') this.#options.onRefreshed?.(source);
  }

  /** True when the stored token is missing or inside the refresh window before `exp`. */
  needsRefresh(): boolean {
    const { token, tokenExpiresAt } = this.#options.store.getState();
    if (token === undefined) return true;
    if (tokenExpiresAt === undefined) return false;
    // `exp` is on the server's clock: a local clock an hour fast must not refresh every time.
    const now = this.#options.now() - this.#skewMs;
    const lifetime = tokenExpiresAt - (this.#issuedAt ?? now);
    const skew = this.#options.refreshSkewMs ?? Math.min(30_000, Math.max(0, lifetime / 10));
    return now >= tokenExpiresAt - skew;
  }

  /** A usable token: the stored one, or a fresh one when it is missing or about to expire. */
  async get(): Promise<string> {
    const token = this.#options.store.getState().token;
    if (token !== undefined && !this.needsRefresh()) return token;
    return this.refresh('expiry');
  }

  /** Fetches a new token; concurrent calls share one request. */
  refresh(source: TokenSource): Promise<string> {
    if (this.#inFlight !== undefined) return this.#inFlight;
    const pending = this.#fetchAndAdopt(source);
    this.#inFlight = pending;
    const clear = () => {
      if (this.#inFlight === pending) this.#inFlight = undefined;
    };
    pending.then(clear, clear);
    return pending;
  }

  async #fetchAndAdopt(source: TokenSource): Promise<string> {
    let token: string;
    try {
      token = await this.#options.fetchToken();
    } catch (error) {
      if (isDurableChatError(error)) throw error;
      // The app's callback failed; its message may be anything, so only the cause keeps it.
      throw new ConnectionError({
        code: 'TOKEN_UNAVAILABLE',
        message: 'could not get a session access token from the app',
        cause: error,
      });
    }
    if (typeof token !== 'string' || token === '') {
      throw new ConnectionError({
        code: 'TOKEN_UNAVAILABLE',
        message: 'the access-token callback returned no token',
      });
    }
    this.adopt(token, source);
    return token;
  }
}
