import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoAgent, startDevServer } from '../../src/dev-server/index.js';
import { type ChatRouteHandlerOptions, createChatRouteHandler } from '../../src/server/chat-route-handler.js';
import { closeAfterEach, hostFetchHandler } from './support/listen.js';

let server: Awaited<ReturnType<typeof startDevServer>>;
beforeAll(async () => {
  server = await startDevServer({ port: 0, agents: [echoAgent] });
});
afterAll(async () => {
  await server?.close();
});
const closeLater = closeAfterEach();

async function routeWith(
  authorize: ChatRouteHandlerOptions['authorize'],
  extra: Partial<ChatRouteHandlerOptions> = {},
) {
  const reported: unknown[] = [];
  const route = closeLater(
    await hostFetchHandler(
      createChatRouteHandler({
        baseURL: server.url,
        secretKey: server.secretKey,
        taskIdentifier: 'echo',
        authorize,
        onError: (error) => reported.push(error),
        ...extra,
      }),
    ),
  );
  const start = (chatId: string) =>
    fetch(route.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ action: 'start', chatId }),
    });
  return { start, reported };
}

describe('authorize allows only on exactly true', () => {
  it.each([
    ['the string "false"', 'false'],
    ['an object', {}],
    ['the number 1', 1],
    ['undefined', undefined],
  ])('an authorize that returns %s denies (403) and is reported', async (_what, value) => {
    const chatId = `authz-${Math.random().toString(36).slice(2)}`;
    const { start, reported } = await routeWith(() => value as never);
    const response = await start(chatId);
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ code: 'FORBIDDEN' });
    expect(reported).toEqual([expect.objectContaining({ code: 'INVALID_INPUT', field: 'authorize' })]);
    expect(server.inspect(chatId)).toBeUndefined();
  });

  it('true still allows', async () => {
    const { start, reported } = await routeWith(async () => true);
    expect((await start(`authz-ok-${Date.now()}`)).status).toBe(200);
    expect(reported).toEqual([]);
  });

  it('an authorize slower than authorizeTimeoutMs answers 503 and creates nothing', async () => {
    const chatId = `authz-slow-${Date.now()}`;
    let late: (() => void) | undefined;
    const { start, reported } = await routeWith(
      () =>
        new Promise<boolean>((resolve) => {
          late = () => resolve(true);
        }),
      { authorizeTimeoutMs: 100 },
    );
    const response = await start(chatId);
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ code: 'AUTHORIZE_TIMEOUT' });
    expect(reported).toEqual([expect.objectContaining({ code: 'SERVER_ERROR' })]);
    late?.();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.inspect(chatId)).toBeUndefined();
  });
});
