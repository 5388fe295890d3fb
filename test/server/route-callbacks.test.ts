import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoAgent, startDevServer } from '../../src/dev-server/index.js';
import { readTokenClaims } from '../../src/protocol/token-claims.js';
import { createRouteSessionCallbacks } from '../../src/route-client/create-route-session-callbacks.js';
import { type ChatRouteHandlerOptions, createChatRouteHandler } from '../../src/server/chat-route-handler.js';
import { failure } from './support/failure.js';
import { hostFetchHandler, type Listening } from './support/listen.js';
import { appendWithToken, readRow } from './support/session-service.js';

let server: Awaited<ReturnType<typeof startDevServer>>;
let app: Listening;
const reported: unknown[] = [];
const open: Listening[] = [];

// Signed-in users send `x-user`; a chat belongs to the user whose name prefixes its id.
const authorize: ChatRouteHandlerOptions['authorize'] = (request, chatId) => {
  const user = request.headers.get('x-user');
  return user !== null && chatId.startsWith(`${user}:`);
};

beforeAll(async () => {
  server = await startDevServer({ port: 0, agents: [echoAgent] });
  app = await hostFetchHandler(
    createChatRouteHandler({
      baseURL: server.url,
      secretKey: server.secretKey,
      taskIdentifier: 'echo',
      authorize,
      createOptions: (request, _chatId, clientData) => ({
        tags: ['route-test'],
        clientData: { ...(clientData as object), userId: request.headers.get('x-user') },
      }),
      onError: (error) => reported.push(error),
    }),
  );
});
afterAll(async () => {
  await Promise.all([app?.close(), ...open.map((listening) => listening.close())]);
  await server?.close();
});

let counter = 0;
const chatIdFor = (user: string) => `${user}:chat-${Date.now()}-${++counter}`;
const callbacksFor = (user: string) =>
  createRouteSessionCallbacks({ endpoint: `${app.url}/api/chat-session`, headers: { 'x-user': user } });

describe('route callbacks → route handler → dev server', () => {
  it('starts a session whose token works, with server-side metadata', async () => {
    const chatId = chatIdFor('alice');
    const callbacks = callbacksFor('alice');
    const started = await callbacks.startSession({
      chatId,
      taskIdentifier: 'echo',
      clientData: { theme: 'dark' },
    });
    expect(started.sessionId).toMatch(/^session_/);
    expect(readTokenClaims(started.publicAccessToken)?.scopes).toContain(`write:sessions:${chatId}`);
    expect((await appendWithToken(server.url, chatId, started.publicAccessToken)).status).toBe(200);
    const row = await readRow(server.url, server.secretKey, started.sessionId ?? '');
    expect(row).toMatchObject({
      externalId: chatId,
      taskIdentifier: 'echo',
      tags: ['route-test'],
      triggerConfig: {
        basePayload: { chatId, trigger: 'preload', metadata: { theme: 'dark', userId: 'alice' } },
      },
    });
  });

  it('start is idempotent and token returns a fresh working token', async () => {
    const chatId = chatIdFor('alice');
    const callbacks = callbacksFor('alice');
    const first = await callbacks.startSession({ chatId });
    const again = await callbacks.startSession({ chatId });
    expect(again.sessionId).toBe(first.sessionId);
    const token = await callbacks.getAccessToken({ chatId });
    expect(token).not.toBe(first.publicAccessToken);
    expect(token).not.toBe(again.publicAccessToken);
    expect((await appendWithToken(server.url, chatId, token)).status).toBe(200);
  });

  it('closes with a reason, idempotently; afterwards start and token are SESSION_CLOSED', async () => {
    const chatId = chatIdFor('alice');
    const callbacks = callbacksFor('alice');
    const { sessionId } = await callbacks.startSession({ chatId });
    await callbacks.closeSession({ chatId, reason: 'user archived the chat' });
    await callbacks.closeSession({ chatId, reason: 'second close' });
    expect(await readRow(server.url, server.secretKey, sessionId ?? '')).toMatchObject({
      closedReason: 'user archived the chat',
    });
    for (const call of [callbacks.startSession({ chatId }), callbacks.getAccessToken({ chatId })]) {
      expect(await failure(call)).toMatchObject({ name: 'SessionClosedError', code: 'SESSION_CLOSED' });
    }
  });

  it('refuses another user’s chat with FORBIDDEN and creates nothing', async () => {
    const chatId = chatIdFor('alice');
    const error = await failure(callbacksFor('mallory').startSession({ chatId }));
    expect(error).toMatchObject({ name: 'AuthError', code: 'FORBIDDEN', status: 403 });
    const lookup = await fetch(`${server.url}/api/v1/sessions/${encodeURIComponent(chatId)}`, {
      headers: { authorization: `Bearer ${server.secretKey}` },
    });
    expect(lookup.status).toBe(404);
  });

  it('answers bad JSON and unknown actions with 400 over HTTP', async () => {
    const post = (body: string) =>
      fetch(`${app.url}/api/chat-session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-user': 'alice' },
        body,
      });
    const badJson = await post('{"action":');
    expect(badJson.status).toBe(400);
    expect(await badJson.json()).toEqual({ error: 'the body is not valid JSON', code: 'INVALID_INPUT' });
    const unknown = await post(JSON.stringify({ action: 'reopen', chatId: chatIdFor('alice') }));
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({
      code: 'INVALID_INPUT',
      error: expect.stringContaining('action'),
    });
  });

  it('maps a wrong secret key to 500 SECRET_KEY_REJECTED without leaking either key', async () => {
    const wrongKey = 'sk_wrong_route_key_8d1e';
    const broken = await hostFetchHandler(
      createChatRouteHandler({
        baseURL: server.url,
        secretKey: wrongKey,
        taskIdentifier: 'echo',
        authorize: () => true,
        onError: (error) => reported.push(error),
      }),
    );
    open.push(broken);
    const response = await fetch(broken.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ action: 'start', chatId: 'bob:x' }),
    });
    const text = await response.text();
    expect(response.status).toBe(500);
    expect(JSON.parse(text)).toEqual({
      error: "the session service rejected this route's secret key; the server's log says how to fix it",
      code: 'SECRET_KEY_REJECTED',
    });
    for (const secret of [wrongKey, server.secretKey]) {
      expect(text).not.toContain(secret);
      for (const error of reported) expect(String((error as Error).message)).not.toContain(secret);
    }
    const callbacks = createRouteSessionCallbacks({ endpoint: broken.url });
    const error = await failure(callbacks.startSession({ chatId: 'bob:y' }));
    expect(error).toMatchObject({
      name: 'ConfigurationError',
      code: 'SECRET_KEY_REJECTED',
      status: 500,
      retryable: false,
    });
    expect(error.message).not.toContain(wrongKey);
  });
});
