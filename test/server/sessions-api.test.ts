import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoAgent, startDevServer } from '../../src/dev-server/index.js';
import { readTokenClaims } from '../../src/protocol/token-claims.js';
import { type CreateSessionInput, createSessionsApi } from '../../src/server/sessions-api.js';
import { failure } from './support/failure.js';
import { appendWithToken, countingFetch, readRow } from './support/session-service.js';

let server: Awaited<ReturnType<typeof startDevServer>>;
beforeAll(async () => {
  server = await startDevServer({ port: 0, agents: [echoAgent] });
});
afterAll(async () => {
  await server?.close();
});

let counter = 0;
const nextChatId = () => `server-api-${Date.now()}-${++counter}`;

function api(fetchImpl?: typeof fetch) {
  return createSessionsApi({
    baseURL: server.url,
    secretKey: server.secretKey,
    fetch: fetchImpl,
    retry: { retries: 0 },
  });
}

function minimal(chatId: string): CreateSessionInput & { externalId: string } {
  return {
    taskIdentifier: 'echo',
    externalId: chatId,
    triggerConfig: { basePayload: { chatId, trigger: 'preload' } },
  };
}

describe('createSessionsApi against the dev server', () => {
  it('creates a session with every field of the create request', async () => {
    const chatId = nextChatId();
    const session = await api().create({
      type: 'chat.agent',
      taskIdentifier: 'echo',
      externalId: chatId,
      tags: ['a', 'b'],
      metadata: { plan: 'pro' },
      expiresAt: '2031-05-01T00:00:00.000Z',
      triggerConfig: {
        basePayload: { chatId, trigger: 'preload', metadata: { userId: 'u1' }, idleTimeoutInSeconds: 60 },
        machine: 'small-1x',
        queue: 'chat',
        tags: ['run-tag'],
        maxAttempts: 3,
        maxDuration: 600,
        lockToVersion: '20250101.1',
        region: 'eu-central-1',
        idleTimeoutInSeconds: 120,
      },
    });
    expect(session).toMatchObject({
      externalId: chatId,
      type: 'chat.agent',
      taskIdentifier: 'echo',
      tags: ['a', 'b'],
      metadata: { plan: 'pro' },
      expiresAt: '2031-05-01T00:00:00.000Z',
      closedAt: null,
      isCached: false,
      triggerConfig: {
        machine: 'small-1x',
        queue: 'chat',
        tags: ['run-tag'],
        maxAttempts: 3,
        maxDuration: 600,
        lockToVersion: '20250101.1',
        region: 'eu-central-1',
        idleTimeoutInSeconds: 120,
        basePayload: { chatId, trigger: 'preload', metadata: { userId: 'u1' } },
      },
    });
    expect(session.id).toMatch(/^session_/);
    expect(session.runId).toMatch(/^run_/);
    const scopes = readTokenClaims(session.publicAccessToken)?.scopes ?? [];
    expect(scopes).toEqual(expect.arrayContaining([`read:sessions:${chatId}`, `write:sessions:${chatId}`]));
    expect((await appendWithToken(server.url, chatId, session.publicAccessToken)).status).toBe(200);
  });

  it('returns the cached session and a fresh 60-minute token on a repeated create', async () => {
    const chatId = nextChatId();
    const sessions = api();
    const first = await sessions.create(minimal(chatId));
    const second = await sessions.create(minimal(chatId));
    expect(second).toMatchObject({ id: first.id, runId: first.runId, isCached: true });
    expect(second.publicAccessToken).not.toBe(first.publicAccessToken);
    const refreshed = await sessions.refreshToken(minimal(chatId));
    expect(refreshed).not.toBe(second.publicAccessToken);
    const expiresIn = (readTokenClaims(refreshed)?.exp ?? 0) - Date.now() / 1000;
    expect(expiresIn).toBeGreaterThan(3_500);
    expect(expiresIn).toBeLessThanOrEqual(3_600);
    expect((await appendWithToken(server.url, chatId, refreshed)).status).toBe(200);
  });

  it('closes with a reason, idempotently, by session id or externalId', async () => {
    const chatId = nextChatId();
    const sessions = api();
    const { id } = await sessions.create(minimal(chatId));
    const closed = await sessions.close(id, 'user left');
    expect(closed).toMatchObject({ id, closedReason: 'user left' });
    expect(closed?.closedAt).toEqual(expect.any(String));
    const again = await sessions.close(chatId, 'another reason');
    expect(again).toMatchObject({ id, closedReason: 'user left', closedAt: closed?.closedAt });
    expect(await readRow(server.url, server.secretKey, id)).toMatchObject({ closedReason: 'user left' });
  });

  it('answers SESSION_CLOSED for a create or a refresh after close', async () => {
    const chatId = nextChatId();
    const sessions = api();
    const { id } = await sessions.create(minimal(chatId));
    await sessions.close(id, 'done');
    for (const call of [sessions.create(minimal(chatId)), sessions.refreshToken(minimal(chatId))]) {
      const error = await failure(call);
      expect(error).toMatchObject({
        name: 'SessionClosedError',
        code: 'SESSION_CLOSED',
        status: 409,
        retryable: false,
      });
      expect(error).toHaveProperty('closedReason', 'done');
    }
  });

  it('rejects bad input locally, before any request', async () => {
    const counter = countingFetch();
    const sessions = api(counter.fetch);
    const chatId = nextChatId();
    const base = minimal(chatId);
    const bad: Array<[() => Promise<unknown>, string]> = [
      [
        () => sessions.create({ ...base, tags: Array.from({ length: 11 }, (_, index) => `t${index}`) }),
        'tags',
      ],
      [() => sessions.create({ ...base, externalId: 'session_x' }), 'externalId'],
      [() => sessions.create({ ...base, expiresAt: 'next tuesday' }), 'expiresAt'],
      [() => sessions.create({ ...base, taskIdentifier: '' }), 'taskIdentifier'],
      [
        () => sessions.create({ ...base, triggerConfig: { ...base.triggerConfig, maxAttempts: 11 } }),
        'triggerConfig.maxAttempts',
      ],
      [
        () => sessions.create({ ...base, triggerConfig: { ...base.triggerConfig, idleTimeoutInSeconds: 0 } }),
        'triggerConfig.idleTimeoutInSeconds',
      ],
      [
        () =>
          sessions.create({
            ...base,
            triggerConfig: { basePayload: { chatId: 'other', trigger: 'preload' } },
          }),
        'triggerConfig.basePayload.chatId',
      ],
      [
        () => sessions.create({ ...base, triggerConfig: { basePayload: { chatId, trigger: 'action' } } }),
        'triggerConfig.basePayload.trigger',
      ],
      [() => sessions.close('session_1', 'r'.repeat(257)), 'reason'],
      [() => sessions.close(''), 'sessionId'],
      [() => sessions.refreshToken({ ...base, externalId: '' }), 'externalId'],
    ];
    for (const [call, field] of bad) {
      const error = await failure(call());
      expect(error).toMatchObject({ name: 'ValidationError', code: 'INVALID_INPUT', field });
    }
    expect(counter.count()).toBe(0);
    await sessions.create(base);
    expect(counter.count()).toBe(1);
  });

  it('maps a wrong secret key to SECRET_KEY_REJECTED without retrying or echoing it', async () => {
    const counter = countingFetch();
    const wrongKey = 'sk_wrong_key_value_123';
    const sessions = createSessionsApi({ baseURL: server.url, secretKey: wrongKey, fetch: counter.fetch });
    const error = await failure(sessions.create(minimal(nextChatId())));
    expect(error).toMatchObject({
      name: 'ConfigurationError',
      code: 'SECRET_KEY_REJECTED',
      field: 'secretKey',
      status: 401,
      retryable: false,
    });
    expect(error.message).toContain(`the session service at ${server.url} rejected the secret key`);
    expect(error.message).toContain('durable-chat dev');
    expect(error.message).not.toContain(wrongKey);
    expect(counter.count()).toBe(1);
  });

  it('maps an unknown task to TASK_NOT_FOUND and closing an unknown session to NOT_FOUND', async () => {
    const sessions = api();
    const chatId = nextChatId();
    const unknownTask = await failure(
      sessions.create({ ...minimal(chatId), taskIdentifier: 'no-such-agent' }),
    );
    expect(unknownTask).toMatchObject({
      name: 'ConfigurationError',
      code: 'TASK_NOT_FOUND',
      field: 'taskIdentifier',
      status: 404,
      retryable: false,
    });
    expect(unknownTask.message).toContain('has no task "no-such-agent"');
    expect(await failure(sessions.close('session_does_not_exist'))).toMatchObject({ code: 'NOT_FOUND' });
  });
});
