import { SignJWT } from 'jose';
import { ValidationError } from '../errors/validation-error.js';
import { validateExternalId } from '../protocol/validate.js';

/** Lifetime of a watch token unless told otherwise: the session token's, 60 minutes. */
export const DEFAULT_WATCH_TOKEN_SECONDS = 3600;

/** The read-only scope of a watch token: the chat's `.out`, nothing else. */
export function watchScope(chatId: string): string {
  return `read:sessions:${chatId}:out`;
}

export interface WatchTokenOptions {
  /** Lifetime in seconds (1 to 86400). Default 3600. */
  expiresInSeconds?: number;
  /** The clock, epoch ms. Default `Date.now`. */
  now?: () => number;
}

/**
 * A read-only token for one chat: scope `read:sessions:{chatId}:out`, so its holder can
 * follow the chat's `.out` but never append (403). Signed here with the secret key (HS256),
 * the way the platform signs its public access tokens; the key never leaves the server.
 */
export async function createWatchToken(
  secretKey: string,
  chatId: string,
  options: WatchTokenOptions = {},
): Promise<string> {
  validateExternalId(chatId, 'chatId');
  const lifetime = options.expiresInSeconds ?? DEFAULT_WATCH_TOKEN_SECONDS;
  if (!Number.isInteger(lifetime) || lifetime < 1 || lifetime > 86_400) {
    throw new ValidationError({
      field: 'expiresInSeconds',
      message: 'expiresInSeconds: an integer from 1 to 86400',
    });
  }
  const now = Math.floor((options.now ?? Date.now)() / 1000);
  return (
    new SignJWT({ pub: true, scopes: [watchScope(chatId)] })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(chatId)
      .setIssuedAt(now)
      .setExpirationTime(now + lifetime)
      // Two tokens minted in the same second differ: one can be revoked (or expired by a dev
      // server's fault) without its successor, which would otherwise be the very same string.
      .setJti(globalThis.crypto.randomUUID())
      .sign(new TextEncoder().encode(secretKey))
  );
}
