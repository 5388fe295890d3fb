import { HEADER } from '../../protocol/headers.js';
import { SESSION_TYPE } from '../../protocol/limits.js';
import type {
  CreateSessionRequest,
  CreateSessionResponse,
  SessionRow,
  TriggerConfig,
} from '../../protocol/types.js';
import { validateCloseReason, validateCreateSessionRequest } from '../../protocol/validate.js';
import type { DevHono } from '../app.js';
import type { DevServerContext } from '../context.js';
import { newSessionId } from '../ids.js';
import { startRun } from '../runs/run.js';
import { Session } from '../store/session.js';
import { sessionScopes } from '../tokens.js';
import { authorizeSession } from './authorize.js';
import { readCappedBody } from './read-capped-body.js';
import {
  badRequestFrom,
  bodyTooLarge,
  errorResponse,
  MAX_REQUEST_BODY_BYTES,
  parseJson,
} from './responses.js';

/** Cached create: sent fields are written to the row; a `basePayload.message` is dropped. */
function applyCachedFields(row: SessionRow, request: CreateSessionRequest): void {
  if (request.tags !== undefined) row.tags = request.tags;
  if (request.metadata !== undefined) row.metadata = request.metadata;
  if (request.expiresAt !== undefined) row.expiresAt = request.expiresAt;
  const { basePayload, ...rest } = request.triggerConfig;
  const { message: _dropped, ...durable } = basePayload;
  const merged: TriggerConfig = { ...row.triggerConfig, ...rest };
  merged.basePayload = { ...row.triggerConfig.basePayload, ...durable };
  row.triggerConfig = merged;
  row.updatedAt = new Date().toISOString();
}

function newRow(request: CreateSessionRequest): SessionRow {
  const now = new Date().toISOString();
  return {
    id: newSessionId(),
    externalId: request.externalId ?? null,
    type: SESSION_TYPE,
    taskIdentifier: request.taskIdentifier,
    triggerConfig: request.triggerConfig,
    currentRunId: null,
    tags: request.tags ?? [],
    metadata: request.metadata ?? null,
    closedAt: null,
    closedReason: null,
    expiresAt: request.expiresAt ?? null,
    createdAt: now,
    updatedAt: now,
  };
}

export function mountSessionRoutes(app: DevHono, context: DevServerContext): void {
  app.post('/api/v1/sessions', async (c) => {
    const principal = await context.tokens.authenticate(c.req.header(HEADER.authorization));
    if ('ok' in principal) return errorResponse(c, 401, `unauthorized: ${principal.reason}`);
    const text = await readCappedBody(c.req.raw, MAX_REQUEST_BODY_BYTES);
    if (text === undefined) return bodyTooLarge(c);
    let request: CreateSessionRequest;
    try {
      const body = parseJson(text);
      validateCreateSessionRequest(body);
      request = body;
    } catch (error) {
      const { error: message, field } = badRequestFrom(error);
      return errorResponse(c, 400, message, { code: 'BAD_REQUEST', field });
    }
    if (principal.kind === 'token') {
      const scopes = principal.scopes;
      if (!scopes.includes('write:sessions') || !scopes.includes(`tasks:${request.taskIdentifier}`)) {
        return errorResponse(
          c,
          403,
          'forbidden: creating a session needs write:sessions and tasks:{taskIdentifier}',
        );
      }
    }
    const agent = context.agentFor(request.taskIdentifier);
    if (agent === undefined) {
      return errorResponse(c, 404, `no agent with id "${request.taskIdentifier}" is served`, {
        code: 'NOT_FOUND',
      });
    }
    const existing =
      request.externalId === undefined
        ? undefined
        : context.sessions.findByExternal(request.taskIdentifier, request.externalId);
    if (existing?.closed === true) {
      return errorResponse(c, 409, 'the session is closed', {
        code: 'session_closed',
        closedReason: existing.row.closedReason,
      });
    }
    let session: Session;
    if (existing === undefined) {
      session = new Session(newRow(request), agent);
      context.sessions.add(session);
      const basePayload = request.triggerConfig.basePayload;
      startRun(context, session, {
        continuation: false,
        previousRunId: undefined,
        firstPayload: basePayload,
      });
    } else {
      session = existing;
      applyCachedFields(session.row, request);
      session.changed();
    }
    // A 201 promises the session (and a 200 the fields it took) survives a restart.
    const kept = session.durable();
    if (kept !== undefined) await kept;
    const runId = session.lastRunId ?? '';
    const publicAccessToken = await context.tokens.mint(
      session.tokenKey,
      sessionScopes(session.tokenKey, runId),
    );
    const runScopes = [`read:runs:${runId}`, `write:inputStreams:${runId}`];
    c.header(HEADER.triggerJwt, await context.tokens.mint(runId, runScopes));
    c.header(HEADER.triggerJwtClaims, JSON.stringify({ sub: runId, scopes: runScopes }));
    const response: CreateSessionResponse = {
      ...session.row,
      runId,
      publicAccessToken,
      isCached: existing !== undefined,
    };
    return c.json(response, existing === undefined ? 201 : 200);
  });

  app.get('/api/v1/sessions/:id', async (c) => {
    const authorized = await authorizeSession(context, c, 'read', (ctx, status, error) =>
      errorResponse(ctx, status, error),
    );
    if (!authorized.ok) return authorized.response;
    return c.json(authorized.session.row);
  });

  app.post('/api/v1/sessions/:id/close', async (c) => {
    const authorized = await authorizeSession(context, c, 'admin', (ctx, status, error) =>
      errorResponse(ctx, status, error),
    );
    if (!authorized.ok) return authorized.response;
    const text = await readCappedBody(c.req.raw, MAX_REQUEST_BODY_BYTES);
    if (text === undefined) return bodyTooLarge(c);
    let reason: string | undefined;
    try {
      const body = parseJson(text) as { reason?: unknown } | undefined;
      validateCloseReason(body?.reason);
      reason = body?.reason as string | undefined;
    } catch (error) {
      const { error: message, field } = badRequestFrom(error);
      return errorResponse(c, 400, message, { code: 'BAD_REQUEST', field });
    }
    const session = authorized.session;
    session.close(reason ?? null);
    const kept = session.durable();
    if (kept !== undefined) await kept;
    return c.json(session.row, 200);
  });
}
