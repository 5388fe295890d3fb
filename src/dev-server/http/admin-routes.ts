import { HEADER } from '../../protocol/headers.js';
import type { DevHono } from '../app.js';
import type { DevServerContext } from '../context.js';
import type { Faults } from '../faults.js';
import { describeSession } from '../inspect.js';
import { readCappedBody } from './read-capped-body.js';
import { bodyTooLarge, errorResponse, MAX_REQUEST_BODY_BYTES, parseJson } from './responses.js';

/** Fault methods the admin endpoint may call, with their positional arguments. */
const FAULT_METHODS = [
  'dropOutAfter',
  'sendOutError',
  'duplicateReplay',
  'stallOutAfter',
  'hangOutConnections',
  'failOutConnections',
  'writeSseInPieces',
  'failAppends',
  'failAppendsAfterStoring',
  'loseAppendResponses',
  'holdAppendResponses',
  'hangAppends',
  'omitTurnCorrelation',
  'expireTokens',
  'revokeToken',
  'setTrimDelay',
  'upgradeMidTurn',
  'crashMidTurn',
  'closeMidTurn',
  'reset',
] as const satisfies readonly (keyof Faults)[];

type FaultMethod = (typeof FAULT_METHODS)[number];

/**
 * `POST /__dev/faults` with `{ "fault": "failAppends", "args": [2, 429] }` (secret key only),
 * `GET /__dev/sessions/{id}` for a session's run state and log sizes, and
 * `POST /__dev/sessions/{id}/cancel-run` to cancel its live run.
 */
export function mountAdminRoutes(app: DevHono, context: DevServerContext): void {
  const requireSecret = async (authorization: string | undefined) => {
    const principal = await context.tokens.authenticate(authorization);
    return !('ok' in principal) && principal.kind === 'secret';
  };

  app.post('/__dev/faults', async (c) => {
    if (!(await requireSecret(c.req.header(HEADER.authorization)))) {
      return errorResponse(c, 401, 'the admin endpoint needs the secret key');
    }
    const text = await readCappedBody(c.req.raw, MAX_REQUEST_BODY_BYTES);
    if (text === undefined) return bodyTooLarge(c);
    let body: { fault?: unknown; args?: unknown };
    try {
      body = (parseJson(text) ?? {}) as { fault?: unknown; args?: unknown };
    } catch {
      return errorResponse(c, 400, 'body: not valid JSON', { code: 'BAD_REQUEST' });
    }
    const name = body.fault;
    if (typeof name !== 'string' || !(FAULT_METHODS as readonly string[]).includes(name)) {
      return errorResponse(c, 400, `fault: one of ${FAULT_METHODS.join(', ')}`, { code: 'BAD_REQUEST' });
    }
    const args = Array.isArray(body.args) ? body.args : [];
    const method = context.faults[name as FaultMethod] as (...values: unknown[]) => void;
    method.apply(context.faults, args);
    return c.json({ ok: true, fault: name });
  });

  app.post('/__dev/sessions/:id/cancel-run', async (c) => {
    if (!(await requireSecret(c.req.header(HEADER.authorization)))) {
      return errorResponse(c, 401, 'the admin endpoint needs the secret key');
    }
    const session = context.sessions.resolve(c.req.param('id'));
    if (session === undefined) return errorResponse(c, 404, 'session not found');
    const run = session.run;
    if (run === null) return c.json({ ok: true, cancelled: false });
    run.terminate('cancel');
    return c.json({ ok: true, cancelled: true, runId: run.id });
  });

  app.get('/__dev/sessions/:id', async (c) => {
    if (!(await requireSecret(c.req.header(HEADER.authorization)))) {
      return errorResponse(c, 401, 'the admin endpoint needs the secret key');
    }
    const session = context.sessions.resolve(c.req.param('id'));
    if (session === undefined) return errorResponse(c, 404, 'session not found');
    return c.json(describeSession(session));
  });
}
