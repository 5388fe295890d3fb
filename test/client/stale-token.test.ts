import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionClient } from '../../src/client/session-client.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { userMessageChunk } from '../../src/protocol/input-chunks.js';
import {
  startEchoServer,
  startSessionVia,
  uniqueChatId,
  userMessage,
} from '../transport/support/dev-server-fixture.js';

/**
 * Issue 21 item 5: an app whose `getAccessToken` keeps returning the same (now expired) token
 * gets an error that says where to look, not a bare "HTTP 401". This server's tokens are
 * expired by a fault, so it is this file's own.
 */
let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer();
});
afterAll(async () => {
  await server.close();
});

/** A client whose getAccessToken caches the first token it ever got: the app's bug. */
async function cachingClient() {
  const chatId = uniqueChatId('stale');
  const start = startSessionVia(server);
  let cached: string | undefined;
  let calls = 0;
  const client = new SessionClient({
    baseURL: server.url,
    chatId,
    taskIdentifier: 'echo',
    startSession: start,
    getAccessToken: async ({ chatId: id }) => {
      calls++;
      cached ??= (await start({ chatId: id, taskIdentifier: 'echo', clientData: undefined }))
        .publicAccessToken;
      return cached;
    },
    retry: { initialDelayMs: 10, maxDelayMs: 50 },
    environment: { warn: () => {} },
  });
  await client.preload();
  // The page has held its token past its expiry; the app's cache holds one just as old.
  await client.tokens.refresh('expiry');
  server.faults.expireTokens();
  return { client, chatId, calls: () => calls };
}

describe('getAccessToken returning a stale token', () => {
  it('an append fails once with STALE_ACCESS_TOKEN naming getAccessToken and its fix, not a bare UNAUTHORIZED', async () => {
    const { client, chatId, calls } = await cachingClient();
    const before = calls();
    const error = await client
      .append(userMessageChunk({ chatId, message: userMessage('hello?') }))
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      name: 'ConfigurationError',
      code: 'STALE_ACCESS_TOKEN',
      field: 'getAccessToken',
      status: 401,
      retryable: false,
    });
    expect(String((error as Error).message)).toMatch(/getAccessToken must mint a new token on every call/);
    expect(String((error as Error).message)).toMatch(/its exp is \d{4}-/);
    expect(calls() - before).toBe(1); // one refresh, then final
    client.close();
  });

  it('a .out read fails the same way', async () => {
    const { client } = await cachingClient();
    const reading = (async () => {
      for await (const _ of client.readOut({})) {
        // nothing arrives: the token is refused
      }
    })();
    await expect(reading).rejects.toMatchObject({ code: 'STALE_ACCESS_TOKEN', field: 'getAccessToken' });
    expect(client.getState().lastError).toMatchObject({ code: 'STALE_ACCESS_TOKEN' });
    client.close();
  });
});
