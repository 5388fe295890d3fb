// @vitest-environment happy-dom
import { waitFor as waitForDom } from '@testing-library/react';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryPersistence, type PersistedChatRecord } from '../../src/client/persistence.js';
import { SessionClient } from '../../src/client/session-client.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { userMessageChunk } from '../../src/protocol/input-chunks.js';
import { clearPersistedSessions } from '../../src/react/browser-persistence.js';
import { startSessionVia, userMessage } from '../transport/support/dev-server-fixture.js';
import { chatOptions, mountChat, nextChatId, startEchoServer } from './support/harness.js';

let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer();
});
afterAll(async () => {
  await server.close();
});

/** A signed-in user's chat page over the browser's localStorage. */
function openAs(user: string, chatId: string, starts: { calls: number }) {
  const { persistence: _memory, ...options } = chatOptions(server, chatId);
  return mountChat({
    ...options,
    persistence: 'local',
    scope: user,
    startSession: startSessionVia(server, starts),
  });
}

const storedKeys = () => Array.from({ length: localStorage.length }, (_, index) => localStorage.key(index));

describe('persisted records are scoped to the signed-in user', () => {
  it("a second user of the same browser never adopts the first user's token: they start (and are authorized) afresh", async () => {
    const chatId = nextChatId('shared-browser');
    const alice = { calls: 0 };
    const first = openAs('alice', chatId, alice);
    await first.run((current) => current.sendMessage({ text: 'mine' }));
    await waitForDom(() => expect(first.current.status).toBe('ready'));
    await first.current.session.sessionTransport.getClient(chatId).flushPersistence();
    first.unmount();
    expect(alice.calls).toBe(1);
    expect(storedKeys()).toContain(`durable-chat:@alice:${chatId}`);

    const bob = { calls: 0 };
    const second = openAs('bob', chatId, bob);
    await second.run((current) => current.sendMessage({ text: 'who reads this?' }));
    await waitForDom(() => expect(second.current.status).toBe('ready'));
    expect(bob.calls).toBe(1);
    second.unmount();

    // Alice again: her own record, her own token, no start.
    const again = openAs('alice', chatId, alice);
    await again.run((current) => current.sendMessage({ text: 'me again' }));
    expect(alice.calls).toBe(1);
    again.unmount();
  });

  it('clearPersistedSessions(scope) removes that scope only; without a scope, every record', () => {
    localStorage.setItem('durable-chat:@alice:c1', '{}');
    localStorage.setItem('durable-chat:@alice%3Ax:c1', '{}');
    localStorage.setItem('durable-chat:@bob:c1', '{}');
    localStorage.setItem('durable-chat:c2', '{}');
    localStorage.setItem('unrelated', 'kept');
    sessionStorage.setItem('durable-chat:@alice:c3', '{}');
    clearPersistedSessions('alice');
    expect(localStorage.getItem('durable-chat:@alice:c1')).toBeNull();
    expect(sessionStorage.getItem('durable-chat:@alice:c3')).toBeNull();
    expect(localStorage.getItem('durable-chat:@alice%3Ax:c1')).toBe('{}');
    expect(localStorage.getItem('durable-chat:@bob:c1')).toBe('{}');
    clearPersistedSessions();
    expect(storedKeys().filter((key) => key?.startsWith('durable-chat:'))).toEqual([]);
    expect(localStorage.getItem('unrelated')).toBe('kept');
  });
});

describe('a closed session keeps no token in its record', () => {
  it('the record keeps the closed marker and drops the token', async () => {
    const chatId = nextChatId('closed-record');
    const records = new Map<string, PersistedChatRecord>();
    const client = new SessionClient({
      baseURL: server.url,
      chatId,
      taskIdentifier: 'echo',
      startSession: startSessionVia(server),
      persistence: memoryPersistence(records),
      environment: { warn: () => {} },
    });
    await client.preload();
    await client.flushPersistence();
    expect(records.get(chatId)?.publicAccessToken).toEqual(expect.any(String));
    const sessionId = client.getState().sessionId;
    await fetch(`${server.url}/api/v1/sessions/${sessionId}/close`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.secretKey}` },
    });
    await expect(
      client.append(userMessageChunk({ chatId, message: userMessage('anyone?') })),
    ).rejects.toMatchObject({ code: 'SESSION_CLOSED' });
    await client.flushPersistence();
    expect(records.get(chatId)).toMatchObject({ closed: true });
    expect(records.get(chatId)?.publicAccessToken).toBeUndefined();
    client.close();
  });
});
