import type { Context } from 'hono';
import { HEADER } from '../../protocol/headers.js';
import type { DevServerContext } from '../context.js';
import type { Session } from '../store/session.js';
import { hasSessionScope, type Principal, readsOutOnly } from '../tokens.js';

export type Authorized =
  /** `outOnly`: a read allowed only by the read-only watch scope (`read:sessions:{id}:out`). */
  { ok: true; principal: Principal; session: Session; outOnly: boolean } | { ok: false; response: Response };

type ErrorWriter = (c: Context, status: 401 | 403 | 404, error: string) => Response;

/**
 * Authenticates the bearer, finds the session named in the path (friendly id or
 * `externalId`) and checks the scope. 401: no valid credential; 404: no such session;
 * 403: a valid token without the scope (a read-only watch token anywhere but `.out`).
 */
export async function authorizeSession(
  context: DevServerContext,
  c: Context,
  action: 'read' | 'write' | 'admin',
  writeError: ErrorWriter,
  /** The route reads `.out`: the read-only watch scope is enough. */
  outRoute = false,
): Promise<Authorized> {
  const principal = await context.tokens.authenticate(c.req.header(HEADER.authorization));
  if ('ok' in principal)
    return { ok: false, response: writeError(c, 401, `unauthorized: ${principal.reason}`) };
  const session = context.sessions.resolve(c.req.param('id') ?? '');
  if (session === undefined) return { ok: false, response: writeError(c, 404, 'session not found') };
  const names = [session.row.id, session.row.externalId];
  const outOnly = outRoute && action === 'read' && readsOutOnly(principal, names);
  if (!outOnly && !hasSessionScope(principal, action, names, action === 'admin')) {
    return {
      ok: false,
      response: writeError(c, 403, `forbidden: the token lacks ${action}:sessions for this session`),
    };
  }
  return { ok: true, principal, session, outOnly };
}
