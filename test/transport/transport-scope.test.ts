import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryPersistence, type PersistedChatRecord } from '../../src/client/persistence.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { SessionChatTransport } from '../../src/transport/session-chat-transport.js';
import { startEchoServer, startSessionVia, TestChat, uniqueChatId } from './support/dev-server-fixture.js';

/** Issue 20 item 1 without React: the transport's `scope` keys the persisted record. */
let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer();
});
afterAll(async () => {
  await server.close();
});

describe('SessionChatTransport scope', () => {
  it('keeps each scope’s record apart: another user of the same storage never adopts the first one’s token', async () => {
    const records = new Map<string, PersistedChatRecord>();
    const chatId = uniqueChatId('scoped');
    const alice = { calls: 0 };
    const first = new SessionChatTransport({
      baseURL: server.url,
      taskIdentifier: 'echo',
      startSession: startSessionVia(server, alice),
      persistence: memoryPersistence(records),
      scope: 'alice',
      environment: { warn: () => {} },
    });
    await new TestChat({ id: chatId, transport: first }).sendMessage({ text: 'mine' });
    await first.getClient(chatId).flushPersistence();
    first.close();
    expect([...records.keys()]).toEqual([`@alice:${chatId}`]);

    const bob = { calls: 0 };
    const second = new SessionChatTransport({
      baseURL: server.url,
      taskIdentifier: 'echo',
      startSession: startSessionVia(server, bob),
      persistence: memoryPersistence(records),
      scope: 'bob',
      environment: { warn: () => {} },
    });
    await second.getClient(chatId).ready();
    expect(second.getState(chatId).token).toBeUndefined(); // nothing of alice's was loaded
    await second.preload(chatId);
    expect(bob.calls).toBe(1); // bob's own start: the app's route authorizes him (or not)
    second.close();
  });
});
