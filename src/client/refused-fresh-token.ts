import { ConfigurationError } from '../errors/configuration-error.js';
import type { HttpError } from '../errors/http-error.js';
import { readTokenClaims } from '../protocol/token-claims.js';

/**
 * The session service refused (401) a token the app's `getAccessToken` (or `startSession`)
 * had just returned for that very refusal. A fresh token is never refused, so the app handed
 * back a stale one (a cached or expired token): retrying cannot help, and the bare HTTP 401
 * would not say where to look. A 403 (a token short of a scope) stays as it is.
 */
export function refusedFreshToken(
  failure: HttpError,
  token: string | undefined,
): HttpError | ConfigurationError {
  if (failure.status !== 401) return failure;
  const exp = token === undefined ? undefined : readTokenClaims(token)?.exp;
  const expiry = exp === undefined ? 'it carries no exp' : `its exp is ${new Date(exp * 1000).toISOString()}`;
  return new ConfigurationError({
    code: 'STALE_ACCESS_TOKEN',
    field: 'getAccessToken',
    status: 401,
    cause: failure,
    message:
      `${failure.message}, with the token getAccessToken had just returned (${expiry}). ` +
      "getAccessToken must mint a new token on every call (as createRouteSessionCallbacks' does), never " +
      'return a cached one; or leave it out to use startSession.',
  });
}
