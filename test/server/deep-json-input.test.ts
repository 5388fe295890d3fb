import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoAgent, startDevServer } from '../../src/dev-server/index.js';
import { createChatRouteHandler } from '../../src/server/chat-route-handler.js';
import { createSessionsApi } from '../../src/server/sessions-api.js';
import { failure } from './support/failure.js';
import { hostFetchHandler, type Listening } from './support/listen.js';

const DEPTH = 50_000;
const deepText = `${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`;
const deepValue = () => JSON.parse(deepText) as unknown;

let server: Awaited<ReturnType<typeof startDevServer>>;
let route: Listening;
const reported: unknown[] = [];
beforeAll(async () => {
  server = await startDevServer({ port: 0, agents: [echoAgent] });
  route = await hostFetchHandler(
    createChatRouteHandler({
      baseURL: server.url,
      secretKey: server.secretKey,
      taskIdentifier: 'echo',
      authorize: () => true,
      retry: { retries: 1, minDelayMs: 1, maxDelayMs: 5 },
      maxBodyBytes: 1_000_000,
      onError: (error) => reported.push(error),
    }),
  );
});
afterAll(async () => {
  await route?.close();
  await server?.close();
});

describe('deeply nested JSON input is INVALID_INPUT, never a network error', () => {
  it('the route answers 400 for deep clientData, without calling the session service', async () => {
    const chatId = `deep-${Date.now()}`;
    const response = await fetch(route.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"action":"start","chatId":"${chatId}","clientData":{"nested":${deepText}}}`,
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'INVALID_INPUT' });
    expect(reported).toEqual([]);
    expect(server.inspect(chatId)).toBeUndefined();
  });

  it('createSessionsApi rejects deep metadata before sending', async () => {
    const api = createSessionsApi({ baseURL: server.url, secretKey: server.secretKey });
    const chatId = `deep-api-${Date.now()}`;
    const error = await failure(
      api.create({
        taskIdentifier: 'echo',
        externalId: chatId,
        triggerConfig: { basePayload: { chatId, trigger: 'preload', metadata: { nested: deepValue() } } },
      }),
    );
    expect(error).toMatchObject({ code: 'INVALID_INPUT', field: 'body' });
  });

  it('the dev server answers 400 to a deep append body', async () => {
    const chatId = `deep-append-${Date.now()}`;
    const created = await createSessionsApi({ baseURL: server.url, secretKey: server.secretKey }).create({
      taskIdentifier: 'echo',
      externalId: chatId,
      triggerConfig: { basePayload: { chatId, trigger: 'preload' } },
    });
    const response = await fetch(`${server.url}/realtime/v1/sessions/${chatId}/in/append`, {
      method: 'POST',
      headers: { authorization: `Bearer ${created.publicAccessToken}`, 'content-type': 'application/json' },
      body: `{"kind":"message","payload":{"chatId":"${chatId}","trigger":"submit-message","message":{"id":"m1","role":"user","parts":[{"type":"text","text":"hi"}]},"metadata":{"nested":${deepText}}}}`,
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ ok: false, code: 'BAD_REQUEST' });
  });
});
