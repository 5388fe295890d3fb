import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DevServer, echoAgent, startDevServer } from '../../src/dev-server/index.js';
import { readTokenClaims } from '../../src/protocol/index.js';
import { createSession, userMessage } from './support/client.js';

let server: DevServer;

beforeAll(async () => {
  server = await startDevServer({ agents: [echoAgent], logger: { warn() {} } });
});
afterAll(() => server.close());

function post(path: string, body: unknown, token = server.secretKey) {
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

describe('POST /api/v1/sessions', () => {
  it('creates a session row with every field, a token and the run headers', async () => {
    const created = await createSession(server, {
      externalId: 'create-1',
      extra: { tags: ['a', 'b'], metadata: { plan: 'pro' }, expiresAt: '2030-01-01T00:00:00.000Z' },
      triggerConfig: { machine: 'small-1x', maxAttempts: 3, idleTimeoutInSeconds: 45 },
    });
    expect(created.status).toBe(201);
    const body = created.body;
    expect(body.id).toMatch(/^session_/);
    expect(body).toMatchObject({
      externalId: 'create-1',
      type: 'chat.agent',
      taskIdentifier: 'echo',
      tags: ['a', 'b'],
      metadata: { plan: 'pro' },
      closedAt: null,
      closedReason: null,
      expiresAt: '2030-01-01T00:00:00.000Z',
      isCached: false,
    });
    expect(body.triggerConfig).toMatchObject({
      machine: 'small-1x',
      maxAttempts: 3,
      basePayload: { chatId: 'create-1' },
    });
    expect(body.runId).toMatch(/^run_/);
    expect(body.currentRunId).toBe(body.runId);
    expect(Date.parse(body.createdAt as string)).not.toBeNaN();
    const claims = readTokenClaims(body.publicAccessToken);
    expect(claims?.scopes).toEqual(
      expect.arrayContaining([
        'read:sessions:create-1',
        'write:sessions:create-1',
        `read:runs:${body.runId}`,
      ]),
    );
    expect((claims?.exp ?? 0) - (claims?.iat ?? 0)).toBe(3600);
    const runClaims = JSON.parse(created.headers.get('x-trigger-jwt-claims') ?? '{}');
    expect(runClaims.scopes).toEqual([`read:runs:${body.runId}`, `write:inputStreams:${body.runId}`]);
    const runToken = created.headers.get('x-trigger-jwt') ?? '';
    expect(readTokenClaims(runToken)?.scopes).toEqual(runClaims.scopes);
    // The run-scoped token can neither read .out nor append to .in.
    const read = await fetch(`${server.url}/realtime/v1/sessions/create-1/out`, {
      headers: { authorization: `Bearer ${runToken}`, accept: 'text/event-stream' },
    });
    expect(read.status).toBe(403);
    const write = await post('/realtime/v1/sessions/create-1/in/append', { kind: 'stop' }, runToken);
    expect(write.status).toBe(403);
  });

  it('returns the cached session with a fresh token, writes sent fields and drops basePayload.message', async () => {
    const first = await createSession(server, { externalId: 'cached-1' });
    const second = await createSession(server, {
      externalId: 'cached-1',
      trigger: 'submit-message',
      message: userMessage('dropped'),
      extra: { tags: ['new'], metadata: { v: 2 } },
      triggerConfig: { queue: 'q2' },
    });
    expect(second.status).toBe(200);
    expect(second.body.isCached).toBe(true);
    expect(second.body.id).toBe(first.body.id);
    expect(second.body.runId).toBe(first.body.runId);
    expect(second.body.publicAccessToken).not.toBe(first.body.publicAccessToken);
    expect(second.body.tags).toEqual(['new']);
    expect(second.body.metadata).toEqual({ v: 2 });
    const config = second.body.triggerConfig as { queue?: string; basePayload: Record<string, unknown> };
    expect(config.queue).toBe('q2');
    expect(config.basePayload.message).toBeUndefined();
    expect(server.inspect('cached-1')?.runCount).toBe(1);
    // The dropped message never became a turn.
    expect(server.inspect('cached-1')?.out.nextSeq).toBe(0);
  });

  it('creates a new session on every call without externalId', async () => {
    const a = await createSession(server);
    const b = await createSession(server);
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(a.body.id).not.toBe(b.body.id);
    expect(a.body.externalId).toBeNull();
    expect(readTokenClaims(a.body.publicAccessToken)?.scopes).toContain(`read:sessions:${a.body.id}`);
  });

  it('answers 409 for a closed session', async () => {
    const created = await createSession(server, { externalId: 'closed-1' });
    expect((await post(`/api/v1/sessions/${created.body.id}/close`, { reason: 'done' })).status).toBe(200);
    const again = await createSession(server, { externalId: 'closed-1' });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'session_closed', closedReason: 'done' });
  });

  it.each([
    ['not JSON', '{', 'body'],
    [
      'wrong type',
      {
        type: 'chat',
        taskIdentifier: 'echo',
        triggerConfig: { basePayload: { chatId: 'x', trigger: 'preload' } },
      },
      'type',
    ],
    [
      'missing taskIdentifier',
      { type: 'chat.agent', triggerConfig: { basePayload: { chatId: 'x', trigger: 'preload' } } },
      'taskIdentifier',
    ],
    [
      'missing basePayload',
      { type: 'chat.agent', taskIdentifier: 'echo', triggerConfig: {} },
      'triggerConfig.basePayload',
    ],
    [
      'externalId with session_ prefix',
      {
        type: 'chat.agent',
        taskIdentifier: 'echo',
        externalId: 'session_x',
        triggerConfig: { basePayload: { chatId: 'session_x', trigger: 'preload' } },
      },
      'externalId',
    ],
    [
      '11 tags',
      {
        type: 'chat.agent',
        taskIdentifier: 'echo',
        tags: Array.from({ length: 11 }, (_, i) => `t${i}`),
        triggerConfig: { basePayload: { chatId: 'x', trigger: 'preload' } },
      },
      'tags',
    ],
    [
      'maxAttempts 11',
      {
        type: 'chat.agent',
        taskIdentifier: 'echo',
        triggerConfig: { maxAttempts: 11, basePayload: { chatId: 'x', trigger: 'preload' } },
      },
      'triggerConfig.maxAttempts',
    ],
    [
      'idle timeout 0',
      {
        type: 'chat.agent',
        taskIdentifier: 'echo',
        triggerConfig: { idleTimeoutInSeconds: 0, basePayload: { chatId: 'x', trigger: 'preload' } },
      },
      'triggerConfig.idleTimeoutInSeconds',
    ],
    [
      'first trigger action',
      {
        type: 'chat.agent',
        taskIdentifier: 'echo',
        triggerConfig: { basePayload: { chatId: 'x', trigger: 'action' } },
      },
      'triggerConfig.basePayload.trigger',
    ],
    [
      'bad expiresAt',
      {
        type: 'chat.agent',
        taskIdentifier: 'echo',
        expiresAt: 'soon',
        triggerConfig: { basePayload: { chatId: 'x', trigger: 'preload' } },
      },
      'expiresAt',
    ],
  ])('answers 400 with the field for %s', async (_name, body, field) => {
    const response = await post('/api/v1/sessions', body);
    expect(response.status).toBe(400);
    const json = (await response.json()) as { error: string; field: string };
    expect(json.field).toBe(field);
    expect(json.error).toContain(field);
  });

  it('answers 404 for an unknown task and 401 without a valid credential', async () => {
    expect((await createSession(server, { taskIdentifier: 'nope' })).status).toBe(404);
    expect((await createSession(server, { token: 'sk_wrong' })).status).toBe(401);
  });

  it('accepts a JWT with write:sessions and tasks:{id}, and refuses one without them', async () => {
    const tokens = server.app.context.tokens;
    const good = await tokens.mint('app', ['write:sessions', 'tasks:echo']);
    const wrongTask = await tokens.mint('app', ['write:sessions', 'tasks:other']);
    expect((await createSession(server, { token: good })).status).toBe(201);
    expect((await createSession(server, { token: wrongTask })).status).toBe(403);
  });
});

describe('POST /api/v1/sessions/{id}/close', () => {
  it('is idempotent and keeps the original closedAt and closedReason', async () => {
    const created = await createSession(server, { externalId: 'close-twice' });
    const first = await post(`/api/v1/sessions/${created.body.id}/close`, { reason: 'first' });
    const firstRow = (await first.json()) as {
      closedAt: string;
      closedReason: string;
      currentRunId: string | null;
    };
    expect(firstRow.closedReason).toBe('first');
    expect(firstRow.currentRunId).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await post('/api/v1/sessions/close-twice/close', { reason: 'second' });
    expect(second.status).toBe(200);
    expect(await second.json()).toMatchObject({ closedAt: firstRow.closedAt, closedReason: 'first' });
  });

  it('accepts no body, rejects a reason over 256 characters', async () => {
    const created = await createSession(server);
    expect((await post(`/api/v1/sessions/${created.body.id}/close`, 'x'.repeat(0))).status).toBe(200);
    const other = await createSession(server);
    const long = await post(`/api/v1/sessions/${other.body.id}/close`, { reason: 'r'.repeat(257) });
    expect(long.status).toBe(400);
    expect(((await long.json()) as { field: string }).field).toBe('reason');
  });

  it('needs the secret key or an admin scope: the session token is not enough', async () => {
    const created = await createSession(server, { externalId: 'close-auth' });
    const denied = await post(
      `/api/v1/sessions/${created.body.id}/close`,
      {},
      created.body.publicAccessToken,
    );
    expect(denied.status).toBe(403);
    const admin = await server.app.context.tokens.mint('ops', ['admin:sessions:close-auth']);
    expect((await post(`/api/v1/sessions/${created.body.id}/close`, {}, admin)).status).toBe(200);
    const superAdmin = await server.app.context.tokens.mint('ops', ['admin:sessions']);
    const other = await createSession(server);
    expect((await post(`/api/v1/sessions/${other.body.id}/close`, {}, superAdmin)).status).toBe(200);
    expect((await post('/api/v1/sessions/session_missing/close', {})).status).toBe(404);
  });
});
