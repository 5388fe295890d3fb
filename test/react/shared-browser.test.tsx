// @vitest-environment happy-dom
import { waitFor as waitForDom } from '@testing-library/react';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { DevServer } from '../../src/dev-server/index.js';
import { createRouteSessionCallbacks } from '../../src/route-client/create-route-session-callbacks.js';
import type { ChatRouteAction } from '../../src/route-client/route-protocol.js';
import { createChatRouteHandler } from '../../src/server/chat-route-handler.js';
import { hostFetchHandler, type Listening } from '../server/support/listen.js';
import { mountChat, nextChatId, nodeFetch, recordingFetch, startEchoServer } from './support/harness.js';

/**
 * Issue 20 item 1: two people, one browser, the hooks' default options (localStorage, no
 * `scope`). The chat route lets a user into the chats whose id starts with their name; who is
 * signed in travels as a header, as a session cookie would.
 */
let server: DevServer;
let app: Listening;
let signedIn = 'alice';
const authorized: { user: string; chatId: string; action: ChatRouteAction }[] = [];

beforeAll(async () => {
  server = await startEchoServer();
  app = await hostFetchHandler(
    createChatRouteHandler({
      baseURL: server.url,
      secretKey: server.secretKey,
      taskIdentifier: 'echo',
      authorize: (request, chatId, action) => {
        const user = request.headers.get('x-user') ?? '';
        authorized.push({ user, chatId, action });
        return chatId.startsWith(`${user}:`);
      },
      onError: () => {},
    }),
  );
});
afterAll(async () => {
  await app.close();
  await server.close();
});
beforeEach(() => {
  localStorage.clear();
  authorized.length = 0;
});

const route = createRouteSessionCallbacks({
  endpoint: `${'http://placeholder'}/api/chat-session`,
  fetch: (_input, init) => nodeFetch(`${app.url}/api/chat-session`, init),
  headers: () => ({ 'x-user': signedIn }),
});

/** A page of the app with the hooks' defaults: only what a chat needs, no persistence or scope. */
function openPage(chatId: string, fetch: typeof globalThis.fetch = nodeFetch) {
  return mountChat({
    chatId,
    baseURL: server.url,
    taskIdentifier: 'echo',
    ...route,
    fetch,
    tabs: false,
    environment: { warn: () => {} },
  });
}

describe('a shared browser on the default options', () => {
  it("the next user never uses the first user's stored token: the route authorizes them first, and refuses", async () => {
    const chatId = `alice:${nextChatId('shared')}`;
    const alice = openPage(chatId);
    await alice.run((chat) => chat.sendMessage({ text: 'my secret plan' }));
    await waitForDom(() => expect(alice.current.status).toBe('ready'));
    await alice.current.session.sessionTransport.getClient(chatId).flushPersistence();
    alice.unmount();
    const stored = localStorage.getItem(`durable-chat:${chatId}`);
    expect(stored).not.toBeNull(); // the record survives for a reload: cursor and session id

    signedIn = 'bob';
    authorized.length = 0;
    const network = recordingFetch();
    const bob = openPage(chatId, network.fetch);
    await bob.run((chat) => chat.sendMessage({ text: 'let me read that' })).catch(() => undefined);
    await waitForDom(() => expect(bob.current.error).toBeDefined());
    expect(bob.current.error).toMatchObject({ code: 'FORBIDDEN', retryable: false });
    expect(authorized).toEqual([{ user: 'bob', chatId, action: 'start' }]);
    // Not one request of bob's page reached the session service with any token.
    expect(network.requests).toEqual([]);
    bob.unmount();
    signedIn = 'alice';
    expect(JSON.parse(stored ?? '{}').publicAccessToken).toBeUndefined();
  });

  it('the same user reloading resumes with one authorized start and the stored cursor', async () => {
    const chatId = `alice:${nextChatId('reload')}`;
    const first = openPage(chatId);
    await first.run((chat) => chat.sendMessage({ text: 'hello' }));
    await waitForDom(() => expect(first.current.status).toBe('ready'));
    const client = first.current.session.sessionTransport.getClient(chatId);
    await client.flushPersistence();
    first.unmount();
    const cursor = JSON.parse(localStorage.getItem(`durable-chat:${chatId}`) ?? '{}').lastEventId;

    authorized.length = 0;
    const cursors: (string | null)[] = [];
    const again = openPage(chatId, (input, init) => {
      if (String(input).endsWith('/out')) cursors.push(new Headers(init?.headers).get('last-event-id'));
      return nodeFetch(input, init);
    });
    await again.run((chat) => chat.sendMessage({ text: 'again' }));
    await waitForDom(() => expect(again.current.status).toBe('ready'));
    expect(authorized).toEqual([{ user: 'alice', chatId, action: 'start' }]);
    expect(again.transcript().at(-1)).toContain('again');
    // The first read of `.out` went on from the stored cursor (of the first turn), not from the start.
    expect(cursor).toBeGreaterThan(0);
    expect(Number(cursors[0])).toBeGreaterThan(0);
    again.unmount();
  });
});
