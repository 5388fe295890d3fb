import { describe, expect, it } from 'vitest';
import { createRouteSessionCallbacks } from '../../src/route-client/create-route-session-callbacks.js';
import { type CreateSessionInput, createSessionsApi } from '../../src/server/sessions-api.js';
import { uniqueChatId } from '../transport/support/dev-server-fixture.js';
import { echoRouteForFile, postRoute as post } from './support/echo-route.js';
import { failure } from './support/failure.js';
import { appendWithToken } from './support/session-service.js';

// The session row's `currentRunId`, from the service through the route to the browser: the
// source a silent turn asks whether its run still lives.

const route = echoRouteForFile();
const nextChatId = () => uniqueChatId('liveness');
const postRoute = (body: unknown) => post(route.url, body);

function minimal(chatId: string): CreateSessionInput & { externalId: string } {
  return {
    taskIdentifier: 'echo',
    externalId: chatId,
    triggerConfig: { basePayload: { chatId, trigger: 'preload' } },
  };
}

const sessions = () =>
  createSessionsApi({ baseURL: route.server.url, secretKey: route.server.secretKey, retry: { retries: 0 } });

describe('createSessionsApi().create() reports the live run', () => {
  it('currentRunId is the run while it lives, null once it is gone, the continuation after the next append', async () => {
    const chatId = nextChatId();
    const api = sessions();
    const created = await api.create(minimal(chatId));
    expect(created.currentRunId).toBe(created.runId);
    const cached = await api.create(minimal(chatId));
    expect(cached).toMatchObject({ isCached: true, runId: created.runId, currentRunId: created.runId });

    expect(route.server.cancelRun(chatId)).toBe(true);
    const gone = await api.create(minimal(chatId));
    expect(gone.isCached).toBe(true);
    expect(gone.currentRunId).toBeNull();

    expect((await appendWithToken(route.server.url, chatId, gone.publicAccessToken)).status).toBe(200);
    const continued = await api.create(minimal(chatId));
    expect(continued.currentRunId).toMatch(/^run_/);
    expect(continued.currentRunId).not.toBe(created.runId);
  });
});

describe('createChatRouteHandler passes currentRunId through', () => {
  it('start and token answer the row’s currentRunId, a string or null', async () => {
    const chatId = nextChatId();
    const start = await postRoute({ action: 'start', chatId });
    expect(start.status).toBe(200);
    const runId = route.server.inspect(chatId)?.row.currentRunId;
    expect(runId).toMatch(/^run_/);
    expect(start.json).toEqual({
      publicAccessToken: expect.any(String),
      sessionId: expect.stringMatching(/^session_/),
      currentRunId: runId,
      isCached: false,
    });
    const token = await postRoute({ action: 'token', chatId });
    expect(token.json).toEqual({ publicAccessToken: expect.any(String), currentRunId: runId });

    route.server.cancelRun(chatId);
    expect((await postRoute({ action: 'start', chatId })).json).toMatchObject({ currentRunId: null });
    expect((await postRoute({ action: 'token', chatId })).json).toMatchObject({ currentRunId: null });
  });

  it('answers 409 SESSION_CLOSED with the close reason once the session is closed on the server', async () => {
    const chatId = nextChatId();
    await postRoute({ action: 'start', chatId });
    await sessions().close(chatId, 'archived by the user');
    for (const action of ['start', 'token'] as const) {
      const answer = await postRoute({ action, chatId });
      expect(answer.status).toBe(409);
      expect(answer.json).toEqual({
        error: 'the session is closed',
        code: 'SESSION_CLOSED',
        closedReason: 'archived by the user',
      });
    }
  });
});

describe('createRouteSessionCallbacks().startSession returns currentRunId', () => {
  it('returns the live run, then null once the run is gone', async () => {
    const chatId = nextChatId();
    const callbacks = createRouteSessionCallbacks({ endpoint: route.url });
    const first = await callbacks.startSession({ chatId, taskIdentifier: 'echo' });
    expect(first.currentRunId).toBe(route.server.inspect(chatId)?.row.currentRunId);
    expect(first.currentRunId).toMatch(/^run_/);
    route.server.cancelRun(chatId);
    const again = await callbacks.startSession({ chatId, taskIdentifier: 'echo' });
    expect(again).toEqual({
      publicAccessToken: expect.any(String),
      sessionId: first.sessionId,
      currentRunId: null,
      isCached: true,
    });
  });

  it('raises SessionClosedError (SESSION_CLOSED, with the reason) for a session closed mid-turn', async () => {
    const chatId = nextChatId();
    const callbacks = createRouteSessionCallbacks({ endpoint: route.url });
    const { publicAccessToken } = await callbacks.startSession({ chatId });
    const slow = {
      kind: 'message',
      payload: {
        chatId,
        trigger: 'submit-message',
        message: { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'slow' }] },
        metadata: { delayMs: 50, repeat: 20 },
      },
    };
    const appended = await fetch(`${route.server.url}/realtime/v1/sessions/${chatId}/in/append`, {
      method: 'POST',
      headers: { authorization: `Bearer ${publicAccessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(slow),
    });
    expect(appended.status).toBe(200);
    expect(route.server.inspect(chatId)?.run?.state).not.toBe('idle');
    await callbacks.closeSession({ chatId, reason: 'closed mid-turn' });
    expect(route.server.inspect(chatId)?.row.currentRunId).toBeNull();
    const error = await failure(callbacks.startSession({ chatId }));
    expect(error).toMatchObject({
      name: 'SessionClosedError',
      code: 'SESSION_CLOSED',
      status: 409,
      retryable: false,
      closedReason: 'closed mid-turn',
    });
  });
});
