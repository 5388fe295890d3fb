import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../src/client/events.js';
import { memoryPersistence, type PersistedChatRecord } from '../../src/client/persistence.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { SessionChatTransport } from '../../src/transport/session-chat-transport.js';
import {
  startEchoServer,
  startSessionVia,
  TestChat,
  transcript,
  uniqueChatId,
} from './support/dev-server-fixture.js';

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

describe('a restored record without a token', () => {
  it('whose session the server no longer has: the start finds another, the cursor is dropped, the reply comes', async () => {
    const chatId = uniqueChatId('gone');
    const records = new Map<string, PersistedChatRecord>([
      [
        chatId,
        {
          version: 1,
          chatId,
          sessionId: 'session_forgotten',
          publicAccessToken: undefined,
          lastEventId: 50,
          turnLive: false,
          turnStartCursor: undefined,
          closed: false,
          closedReason: null,
        },
      ],
    ]);
    const events: SessionEvent[] = [];
    const transport = new SessionChatTransport({
      baseURL: server.url,
      taskIdentifier: 'echo',
      startSession: startSessionVia(server),
      persistence: memoryPersistence(records),
      onEvent: (event) => events.push(event),
      environment: { warn: () => {} },
    });
    const chat = new TestChat({ id: chatId, transport });
    await chat.sendMessage({ text: 'still there?' });
    expect(transcript(chat.messages)).toEqual(['user: still there?', 'assistant: Echo: still there?']);
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'session-replaced', previousSessionId: 'session_forgotten' }),
    );
    expect(transport.getState(chatId).sessionId).toMatch(/^session_/);
    expect(transport.getState(chatId).sessionId).not.toBe('session_forgotten');
    transport.close();
  });
});
