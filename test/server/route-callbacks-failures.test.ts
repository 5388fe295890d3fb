import { describe, expect, it } from 'vitest';
import { createRouteSessionCallbacks } from '../../src/route-client/create-route-session-callbacks.js';
import { type ChatRouteHandlerOptions, createChatRouteHandler } from '../../src/server/chat-route-handler.js';
import { failure } from './support/failure.js';
import {
  closeAfterEach,
  createdSession,
  hostFetchHandler,
  type RecordedRequest,
  type Reply,
  replyJson,
  startScriptedUpstream,
} from './support/listen.js';

const secretKey = 'sk_test_callbacks_0c4f';
const closeLater = closeAfterEach();

async function routeFor(replies: Reply[], overrides: Partial<ChatRouteHandlerOptions> = {}) {
  const upstream = closeLater(await startScriptedUpstream(replies));
  const app = await hostFetchHandler(
    createChatRouteHandler({
      baseURL: upstream.url,
      secretKey,
      taskIdentifier: 'echo',
      authorize: (request) => request.headers.get('x-user') === 'alice',
      retry: { retries: 0 },
      onError: () => {},
      ...overrides,
    }),
  );
  closeLater(app);
  return {
    endpoint: `${app.url}/api/chat-session`,
    requests: upstream.requests as RecordedRequest[],
    close: async () => {
      await Promise.all([upstream.close(), app.close()]);
    },
  };
}

describe('createRouteSessionCallbacks over a real route', () => {
  it('sends its headers (a function is called per request) and re-sends clientData on token', async () => {
    const { endpoint, requests } = await routeFor([
      replyJson(201, createdSession('c1')),
      replyJson(200, createdSession('c1', true)),
    ]);
    let calls = 0;
    const callbacks = createRouteSessionCallbacks({
      endpoint,
      headers: async () => {
        calls++;
        return { 'x-user': 'alice' };
      },
    });
    const started = await callbacks.startSession({
      chatId: 'c1',
      taskIdentifier: 'echo', // the route's own: checked, never needed
      clientData: { a: 1 },
    });
    expect(started).toEqual({
      publicAccessToken: 'token-for-c1',
      sessionId: 'session_c1',
      currentRunId: 'run_1',
      isCached: false,
    });
    expect(await callbacks.getAccessToken({ chatId: 'c1' })).toBe('token-for-c1');
    expect(calls).toBe(2);
    const payloads = requests.map(
      (request) => (request.body as { triggerConfig: { basePayload: unknown } }).triggerConfig.basePayload,
    );
    expect(payloads).toEqual([
      { chatId: 'c1', trigger: 'preload', metadata: { a: 1 } },
      { chatId: 'c1', trigger: 'preload', metadata: { a: 1 } },
    ]);
    expect(requests.map((request) => (request.body as { taskIdentifier: string }).taskIdentifier)).toEqual([
      'echo',
      'echo',
    ]);
  });

  it('leaves currentRunId undefined when the service did not send it, and refuses a malformed one', async () => {
    const { currentRunId: _omitted, ...withoutRun } = createdSession('c2');
    const silent = await routeFor([replyJson(201, withoutRun)]);
    const callbacks = createRouteSessionCallbacks({
      endpoint: silent.endpoint,
      headers: { 'x-user': 'alice' },
    });
    const started = await callbacks.startSession({ chatId: 'c2' });
    expect(started).toEqual({ publicAccessToken: 'token-for-c2', sessionId: 'session_c2', isCached: false });
    expect('currentRunId' in started).toBe(false);

    const idle = await routeFor([replyJson(200, { ...createdSession('c3', true), currentRunId: null })]);
    const idleCallbacks = createRouteSessionCallbacks({
      endpoint: idle.endpoint,
      headers: { 'x-user': 'alice' },
    });
    expect((await idleCallbacks.startSession({ chatId: 'c3' })).currentRunId).toBeNull();

    const malformed = await routeFor([replyJson(201, { ...createdSession('c4'), currentRunId: 42 })]);
    const malformedCallbacks = createRouteSessionCallbacks({
      endpoint: malformed.endpoint,
      headers: { 'x-user': 'alice' },
    });
    // The sessions API refuses the service's answer, so the route reports the upstream as broken.
    expect(await failure(malformedCallbacks.startSession({ chatId: 'c4' }))).toMatchObject({
      code: 'SERVER_ERROR',
      status: 502,
    });
  });

  it('maps a refusal to AuthError FORBIDDEN', async () => {
    const { endpoint, requests } = await routeFor([replyJson(201, createdSession('c'))]);
    const callbacks = createRouteSessionCallbacks({ endpoint, headers: { 'x-user': 'mallory' } });
    const error = await failure(callbacks.startSession({ chatId: 'c' }));
    expect(error).toMatchObject({ name: 'AuthError', code: 'FORBIDDEN', status: 403 });
    expect(requests).toHaveLength(0);
  });

  it('maps a closed session to SessionClosedError and upstream trouble to ServerError', async () => {
    const closed = await routeFor([replyJson(409, { error: 'closed', code: 'session_closed' })]);
    const first = createRouteSessionCallbacks({ endpoint: closed.endpoint, headers: { 'x-user': 'alice' } });
    expect(await failure(first.getAccessToken({ chatId: 'c' }))).toMatchObject({
      name: 'SessionClosedError',
      code: 'SESSION_CLOSED',
      retryable: false,
    });
    const broken = await routeFor([replyJson(500, { error: `key ${secretKey}` })]);
    const second = createRouteSessionCallbacks({ endpoint: broken.endpoint, headers: { 'x-user': 'alice' } });
    const error = await failure(second.closeSession({ chatId: 'c', reason: 'bye' }));
    expect(error).toMatchObject({ name: 'ServerError', code: 'SERVER_ERROR', status: 502, retryable: true });
    expect(error.message).not.toContain(secretKey);
  });

  it('rejects bad input locally, before any request', async () => {
    let fetched = 0;
    const callbacks = createRouteSessionCallbacks({
      endpoint: 'http://127.0.0.1:1/never',
      fetch: async (...args) => {
        fetched++;
        return fetch(...args);
      },
    });
    expect(await failure(callbacks.startSession({ chatId: 'session_x' }))).toMatchObject({
      code: 'INVALID_INPUT',
    });
    expect(await failure(callbacks.getAccessToken({ chatId: '' }))).toMatchObject({ code: 'INVALID_INPUT' });
    const longReason = 'r'.repeat(300);
    expect(await failure(callbacks.closeSession({ chatId: 'c', reason: longReason }))).toMatchObject({
      code: 'INVALID_INPUT',
      field: 'reason',
    });
    expect(fetched).toBe(0);
  });

  it('maps an unreachable route to ConnectionError NETWORK_ERROR', async () => {
    const { endpoint, close } = await routeFor([replyJson(201, createdSession('c'))]);
    await close();
    const callbacks = createRouteSessionCallbacks({ endpoint });
    expect(await failure(callbacks.startSession({ chatId: 'c' }))).toMatchObject({
      name: 'ConnectionError',
      code: 'NETWORK_ERROR',
    });
  });

  it('maps a 2xx without the expected fields to ProtocolError', async () => {
    const app = closeLater(await hostFetchHandler(async () => new Response('{"ok":true}', { status: 200 })));
    const callbacks = createRouteSessionCallbacks({ endpoint: app.url });
    for (const call of [
      callbacks.startSession({ chatId: 'c' }),
      callbacks.getAccessToken({ chatId: 'c' }),
      callbacks.closeSession({ chatId: 'c' }),
    ]) {
      expect(await failure(call)).toMatchObject({ name: 'ProtocolError', code: 'UNEXPECTED_RESPONSE' });
    }
    const html = closeLater(await hostFetchHandler(async () => new Response('<html>', { status: 200 })));
    const second = createRouteSessionCallbacks({ endpoint: html.url });
    expect(await failure(second.getAccessToken({ chatId: 'c' }))).toMatchObject({
      code: 'UNEXPECTED_RESPONSE',
    });
  });
});
