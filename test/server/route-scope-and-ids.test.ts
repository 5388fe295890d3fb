import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoAgent, echoAgent, startDevServer } from '../../src/dev-server/index.js';
import { createChatRouteHandler } from '../../src/server/chat-route-handler.js';
import { createSessionsApi } from '../../src/server/sessions-api.js';
import { hostFetchHandler, type Listening } from './support/listen.js';

let server: Awaited<ReturnType<typeof startDevServer>>;
let echoRoute: Listening;
const reported: unknown[] = [];

beforeAll(async () => {
  server = await startDevServer({ port: 0, agents: [echoAgent, demoAgent] });
  echoRoute = await hostFetchHandler(
    createChatRouteHandler({
      baseURL: server.url,
      secretKey: server.secretKey,
      taskIdentifier: 'echo',
      authorize: () => true,
      onError: (error) => reported.push(error),
    }),
  );
});
afterAll(async () => {
  await echoRoute?.close();
  await server?.close();
});

function post(body: unknown): Promise<Response> {
  return fetch(echoRoute.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

describe("the route's close is scoped to its task", () => {
  it("closing chat X on the echo route leaves the demo task's session X open", async () => {
    const api = createSessionsApi({ baseURL: server.url, secretKey: server.secretKey });
    const chatId = `shared-${Date.now()}`;
    const basePayload = { chatId, trigger: 'preload' as const };
    const demo = await api.create({
      taskIdentifier: 'demo',
      externalId: chatId,
      triggerConfig: { basePayload },
    });
    const closed = await post({ action: 'close', chatId });
    expect(closed.status).toBe(200);
    expect(server.inspect(demo.id)?.row.closedAt ?? null).toBeNull();
    // The echo task's session of the same chat id is the one that was closed.
    const again = await post({ action: 'start', chatId });
    expect(again.status).toBe(409);
    // A second close of a closed session still succeeds.
    expect((await post({ action: 'close', chatId })).status).toBe(200);
  });
});

describe('chat ids that are not one URL path segment are typed validation errors', () => {
  it.each([['.'], ['..'], ['\ud800'], ['a\udc00b']])(
    'the route answers 400 INVALID_INPUT for %j',
    async (chatId) => {
      for (const action of ['start', 'token', 'close']) {
        const response = await post({ action, chatId });
        expect(response.status).toBe(400);
        expect(await response.json()).toMatchObject({ code: 'INVALID_INPUT' });
      }
    },
  );

  it('createSessionsApi rejects them before sending anything (close and create)', async () => {
    const api = createSessionsApi({ baseURL: server.url, secretKey: server.secretKey });
    for (const id of ['.', '..', '\ud800']) {
      await expect(api.close(id)).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'sessionId' });
      await expect(
        api.create({
          taskIdentifier: 'echo',
          externalId: id,
          triggerConfig: { basePayload: { chatId: id, trigger: 'preload' } },
        }),
      ).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'externalId' });
    }
  });
});
