import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DevServer, echoAgent, startDevServer } from '../../src/dev-server/index.js';
import { readTokenClaims } from '../../src/protocol/token-claims.js';
import { createRouteSessionCallbacks } from '../../src/route-client/create-route-session-callbacks.js';
import { parseChatRouteRequest } from '../../src/route-client/route-protocol.js';
import { createChatRouteHandler } from '../../src/server/chat-route-handler.js';
import { createWatchToken } from '../../src/server/watch-token.js';
import { hostFetchHandler, type Listening } from './support/listen.js';

let server: DevServer;
let route: Listening;
const seen: { chatId: string; action: string }[] = [];
beforeAll(async () => {
  server = await startDevServer({ port: 0, agents: [echoAgent], logger: { warn() {} } });
  route = await hostFetchHandler(
    createChatRouteHandler({
      baseURL: server.url,
      secretKey: server.secretKey,
      taskIdentifier: 'echo',
      authorize: (_request, chatId, action) => {
        seen.push({ chatId, action });
        return !chatId.startsWith('private');
      },
      onError: () => {},
    }),
  );
});
afterAll(async () => {
  await route.close();
  await server.close();
});

describe("the chat route's watch action", () => {
  it('asks authorize with the watch action and answers a read-only token without creating a session', async () => {
    const routes = createRouteSessionCallbacks({ endpoint: route.url });
    const token = await routes.getWatchToken({ chatId: 'watched-chat' });
    expect(seen.at(-1)).toEqual({ chatId: 'watched-chat', action: 'watch' });
    const claims = readTokenClaims(token);
    expect(claims?.scopes).toEqual(['read:sessions:watched-chat:out']);
    expect((claims?.exp ?? 0) - (claims?.iat ?? 0)).toBe(3600);
    // Nothing was created: the chat has no session yet.
    const out = await fetch(`${server.url}/realtime/v1/sessions/watched-chat/out`, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
    });
    expect(out.status).toBe(404);
  });

  it('is refused (403, typed) when authorize says no', async () => {
    const routes = createRouteSessionCallbacks({ endpoint: route.url });
    await expect(routes.getWatchToken({ chatId: 'private-chat' })).rejects.toMatchObject({
      code: 'FORBIDDEN',
      status: 403,
      retryable: false,
    });
  });

  it('a watch token reads .out but not the session row, and never appends', async () => {
    const chatId = 'watch-scope';
    const routes = createRouteSessionCallbacks({ endpoint: route.url });
    await routes.startSession({ chatId });
    const token = await routes.getWatchToken({ chatId });
    const headers = { authorization: `Bearer ${token}` };
    const out = await fetch(`${server.url}/realtime/v1/sessions/${chatId}/out`, {
      headers: { ...headers, accept: 'text/event-stream', 'timeout-seconds': '1' },
    });
    expect(out.status).toBe(200);
    await out.body?.cancel();
    expect((await fetch(`${server.url}/api/v1/sessions/${chatId}`, { headers })).status).toBe(403);
    const close = await fetch(`${server.url}/api/v1/sessions/${chatId}/close`, { method: 'POST', headers });
    expect(close.status).toBe(403);
  });

  it('parses { action: "watch", chatId } and drops anything else the browser adds', () => {
    expect(parseChatRouteRequest({ action: 'watch', chatId: 'c1', clientData: { a: 1 } })).toEqual({
      action: 'watch',
      chatId: 'c1',
    });
  });

  it('createWatchToken refuses a lifetime outside 1..86400 seconds', async () => {
    await expect(createWatchToken('tr_dev_x', 'c1', { expiresInSeconds: 0 })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      field: 'expiresInSeconds',
    });
  });
});
