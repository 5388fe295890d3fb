import type { TokenClaims } from './types.js';

function base64UrlDecode(segment: string): string {
  const base64 = segment.replace(/-/g, '+').replace(/_/g, '/');
  const padded = base64 + '='.repeat((4 - (base64.length % 4)) % 4);
  const binary = atob(padded);
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index);
  return new TextDecoder().decode(bytes);
}

/**
 * Reads a JWT's payload without verifying it: a client has no key and only needs `exp`
 * and `scopes`. Returns undefined for anything that is not a readable JWT.
 */
export function readTokenClaims(token: string): TokenClaims | undefined {
  const parts = token.split('.');
  if (parts.length !== 3 || parts[1] === undefined) return undefined;
  try {
    const payload = JSON.parse(base64UrlDecode(parts[1])) as Record<string, unknown>;
    // A JWT payload is a JSON object; an array or a scalar is not a claims set.
    if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return undefined;
    const claims: TokenClaims = {};
    if (typeof payload.sub === 'string') claims.sub = payload.sub;
    if (typeof payload.exp === 'number') claims.exp = payload.exp;
    if (typeof payload.iat === 'number') claims.iat = payload.iat;
    if (Array.isArray(payload.scopes)) {
      claims.scopes = payload.scopes.filter((scope): scope is string => typeof scope === 'string');
    }
    return claims;
  } catch {
    return undefined;
  }
}

/** The live run id from a `read:runs:{runId}` scope, if the token names one. */
export function runIdFromScopes(scopes: readonly string[] | undefined): string | undefined {
  if (scopes === undefined) return undefined;
  for (const scope of scopes) {
    // `read:runs:` with nothing after it names no run.
    if (scope.startsWith('read:runs:') && scope.length > 'read:runs:'.length) {
      return scope.slice('read:runs:'.length);
    }
  }
  return undefined;
}

/** Expiry of a token in epoch ms, if it says. */
export function tokenExpiresAt(token: string): number | undefined {
  const exp = readTokenClaims(token)?.exp;
  return exp === undefined ? undefined : exp * 1000;
}
