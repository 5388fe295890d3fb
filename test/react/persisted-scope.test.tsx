// @vitest-environment happy-dom
import { waitFor as waitForDom } from '@testing-library/react';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLOSED_RECORD_TTL_MS,
  memoryPersistence,
  type PersistedChatRecord,
} from '../../src/client/persistence.js';
import { SessionClient } from '../../src/client/session-client.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { userMessageChunk } from '../../src/protocol/input-chunks.js';
import { clearPersistedSessions } from '../../src/session/browser-persistence.js';
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

describe('a closed session leaves a tombstone', () => {
  it('the record keeps the closed marker and when it was learned: no session id, token, cursor or message', async () => {
    const chatId = nextChatId('closed-record');
    const records = new Map<string, PersistedChatRecord>();
    let now = Date.parse('2026-01-01T00:00:00Z');
    const client = new SessionClient({
      baseURL: server.url,
      chatId,
      taskIdentifier: 'echo',
      startSession: startSessionVia(server),
      persistence: memoryPersistence(records),
      scope: 'alice',
      environment: { warn: () => {}, now: () => now },
    });
    await client.append(userMessageChunk({ chatId, message: userMessage('first') }));
    await client.flushPersistence();
    expect(records.get(`@alice:${chatId}`)?.publicAccessToken).toEqual(expect.any(String));
    const sessionId = client.getState().sessionId;
    await fetch(`${server.url}/api/v1/sessions/${sessionId}/close`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.secretKey}` },
    });
    now += 1_000;
    await expect(
      client.append(userMessageChunk({ chatId, message: userMessage('anyone?') })),
    ).rejects.toMatchObject({ code: 'SESSION_CLOSED' });
    await client.flushPersistence();
    client.close();
    expect(records.get(`@alice:${chatId}`)).toEqual({
      version: 1,
      chatId,
      sessionId: undefined,
      publicAccessToken: undefined,
      lastEventId: undefined,
      turnLive: false,
      turnStartCursor: undefined,
      closed: true,
      closedReason: null,
      closedAt: now,
    });
  });

  it('a tombstone tells a reload the chat is closed for a day, then is removed; the server still says closed', async () => {
    const chatId = nextChatId('tombstone');
    const closedAt = Date.parse('2026-01-01T00:00:00Z');
    const records = new Map<string, PersistedChatRecord>();
    const open = (now: number, starts: { calls: number }) =>
      new SessionClient({
        baseURL: server.url,
        chatId,
        taskIdentifier: 'echo',
        startSession: startSessionVia(server, starts),
        persistence: memoryPersistence(records),
        environment: { warn: () => {}, now: () => now },
      });
    // The session exists and is closed on the server; this page's record says so.
    const setup = open(closedAt, { calls: 0 });
    await setup.preload();
    await fetch(`${server.url}/api/v1/sessions/${setup.getState().sessionId}/close`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.secretKey}` },
    });
    setup.markClosed(null);
    await setup.flushPersistence();
    setup.close();
    expect(records.get(chatId)).toMatchObject({ closed: true, closedAt });

    const sameDay = { calls: 0 };
    const reloaded = open(closedAt + CLOSED_RECORD_TTL_MS - 1, sameDay);
    await reloaded.ready();
    expect(reloaded.getState().closed).toBe(true);
    await expect(reloaded.preload()).rejects.toMatchObject({ code: 'SESSION_CLOSED' });
    expect(sameDay.calls).toBe(0);
    reloaded.close();

    const nextDay = { calls: 0 };
    const later = open(closedAt + CLOSED_RECORD_TTL_MS, nextDay);
    await later.ready();
    expect(later.getState().closed).toBe(false);
    expect(records.has(chatId)).toBe(false);
    await expect(later.preload()).rejects.toMatchObject({ code: 'SESSION_CLOSED' });
    expect(nextDay.calls).toBe(1);
    await later.flushPersistence();
    expect(records.get(chatId)).toMatchObject({ closed: true, closedAt: closedAt + CLOSED_RECORD_TTL_MS });
    later.close();
  });
});
