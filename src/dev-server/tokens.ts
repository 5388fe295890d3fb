import { createHash, timingSafeEqual } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { randomId } from './ids.js';

/** Who is calling: the holder of the secret key, or a JWT with these scopes. */
export type Principal = { kind: 'secret' } | { kind: 'token'; scopes: readonly string[]; subject: string };

export type AuthFailure = { ok: false; status: 401; reason: string };

interface VerifiedToken {
  scopes: string[];
  subject: string;
  serial: number;
  jti: string;
  /** Seconds since the epoch. */
  exp: number;
}

/** Signature checks remembered (the hot path verifies the same token on every append). */
const MAX_VERIFIED_TOKENS = 2048;

/**
 * Mints and checks JWTs (HS256, key derived from the secret key so the secret itself never
 * signs anything). Revocation and mass expiry exist for fault injection: each token carries
 * a serial number `n`, and everything below a watermark (or listed by `jti`) is refused.
 */
export class TokenService {
  private readonly key: Uint8Array;
  private readonly secret: Buffer;
  private serial = 0;
  private minimumSerial = 0;
  private readonly revoked = new Set<string>();
  private readonly verified = new Map<string, VerifiedToken>();

  constructor(
    secretKey: string,
    public ttlSeconds: number,
    private readonly clock: () => number = Date.now,
  ) {
    this.secret = Buffer.from(secretKey);
    this.key = createHash('sha256').update(`durable-chat-dev-jwt:${secretKey}`).digest();
  }

  async mint(subject: string, scopes: string[], ttlSeconds = this.ttlSeconds): Promise<string> {
    this.serial += 1;
    const now = Math.floor(this.clock() / 1000);
    return new SignJWT({ scopes, n: this.serial })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(subject)
      .setIssuedAt(now)
      .setExpirationTime(now + ttlSeconds)
      .setJti(randomId(12))
      .sign(this.key);
  }

  /** Resolves a bearer credential. Never echoes the credential in a failure reason. */
  async authenticate(authorization: string | undefined): Promise<Principal | AuthFailure> {
    const match = /^Bearer\s+(.+)$/i.exec(authorization?.trim() ?? '');
    const credential = match?.[1];
    if (credential === undefined) return { ok: false, status: 401, reason: 'missing bearer token' };
    const candidate = Buffer.from(credential);
    if (candidate.length === this.secret.length && timingSafeEqual(candidate, this.secret)) {
      return { kind: 'secret' };
    }
    const token = this.verified.get(credential) ?? (await this.verify(credential));
    if ('ok' in token) return token;
    if (token.serial <= this.minimumSerial || this.revoked.has(token.jti)) {
      return { ok: false, status: 401, reason: 'token revoked' };
    }
    if (token.exp * 1000 <= this.clock()) return { ok: false, status: 401, reason: 'token expired' };
    return { kind: 'token', scopes: token.scopes, subject: token.subject };
  }

  /** Checks the signature once per token; revocation and expiry are re-checked on every use. */
  private async verify(credential: string): Promise<VerifiedToken | AuthFailure> {
    try {
      const { payload } = await this.verifyWithEitherKey(credential);
      const scopes = Array.isArray(payload.scopes)
        ? payload.scopes.filter((scope): scope is string => typeof scope === 'string')
        : [];
      const token: VerifiedToken = {
        scopes,
        subject: payload.sub ?? '',
        // A token the app's server signed has no serial: it gets one when first seen, so
        // `expireAll` reaches it as it reaches the tokens minted here.
        serial: typeof payload.n === 'number' ? payload.n : ++this.serial,
        jti: payload.jti ?? '',
        exp: payload.exp ?? 0,
      };
      this.verified.set(credential, token);
      if (this.verified.size > MAX_VERIFIED_TOKENS) {
        const oldest = this.verified.keys().next();
        if (oldest.done !== true) this.verified.delete(oldest.value);
      }
      return token;
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) return { ok: false, status: 401, reason: 'token expired' };
      return { ok: false, status: 401, reason: 'invalid token' };
    }
  }

  /**
   * The dev server's own tokens are signed with a key derived from the secret; a token the
   * app's server signed with the secret key itself (as the platform's public tokens are, e.g.
   * `durable-chat/server`'s watch token) is accepted too.
   */
  private async verifyWithEitherKey(credential: string) {
    const options = { algorithms: ['HS256'], currentDate: new Date(this.clock()) };
    try {
      return await jwtVerify(credential, this.key, options);
    } catch (error) {
      if (!(error instanceof joseErrors.JWSSignatureVerificationFailed)) throw error;
      return jwtVerify(credential, new Uint8Array(this.secret), options);
    }
  }

  /** Every token minted so far stops working; later ones work. */
  expireAll(): void {
    this.minimumSerial = this.serial;
  }

  /** One token stops working (reads its `jti` without trusting anything else in it). */
  revoke(token: string): void {
    const payload = token.split('.')[1];
    if (payload === undefined) return;
    try {
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { jti?: unknown };
      if (typeof claims.jti === 'string') this.revoked.add(claims.jti);
    } catch {
      // Not a JWT we minted: nothing to revoke, and it could never authenticate anyway.
    }
  }
}

/** Scopes of a session's `publicAccessToken`. */
export function sessionScopes(key: string, runId: string | null): string[] {
  const scopes = [`read:sessions:${key}`, `write:sessions:${key}`];
  if (runId !== null) scopes.push(`read:runs:${runId}`);
  return scopes;
}

/**
 * The read-only scope of a watch token: `.out` of one session and nothing else. Its holder
 * may follow the chat but never append, and the refreshed tokens that `turn-complete`
 * records carry (which can append) are removed from what it reads.
 */
export function outOnlyScope(name: string): string {
  return `read:sessions:${name}:out`;
}

/** True when the principal may read `.out` only through the read-only scope (see `outOnlyScope`). */
export function readsOutOnly(principal: Principal, names: readonly (string | null)[]): boolean {
  if (principal.kind === 'secret' || hasSessionScope(principal, 'read', names)) return false;
  return principal.scopes.some((scope) =>
    names.some((name) => name !== null && scope === outOnlyScope(name)),
  );
}

/** True when the principal holds `action:sessions:{id}` for any of the session's names (or the super-scope). */
export function hasSessionScope(
  principal: Principal,
  action: 'read' | 'write' | 'admin',
  names: readonly (string | null)[],
  allowSuper = false,
): boolean {
  if (principal.kind === 'secret') return true;
  for (const scope of principal.scopes) {
    if (allowSuper && scope === `${action}:sessions`) return true;
    for (const name of names) if (name !== null && scope === `${action}:sessions:${name}`) return true;
  }
  return false;
}
