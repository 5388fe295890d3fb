import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryPersistence } from '../../src/client/persistence.js';
import { iterateOut, type ReadOutItem } from '../../src/client/read-out-iterable.js';
import { SessionClient } from '../../src/client/session-client.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { SessionClosedError } from '../../src/errors/http-error.js';
import { userMessageChunk } from '../../src/protocol/input-chunks.js';
import type { ClassifiedRecord } from '../../src/protocol/records.js';
import { SessionChatTransport } from '../../src/transport/session-chat-transport.js';
import { runConversation, SCRIPT } from './support/conversation.js';
import {
  readAll,
  startEchoServer,
  startSessionVia,
  TestChat,
  uniqueChatId,
  userMessage,
  waitFor,
} from './support/dev-server-fixture.js';
import { closedOut } from './support/wire-filters.js';

/** Issue 11, point 8: the smaller items, each with its own test (library defaults). */
let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer();
});
afterAll(async () => {
  await server.close();
});

function client(overrides: Partial<ConstructorParameters<typeof SessionClient>[0]> = {}) {
  return new SessionClient({
    baseURL: server.url,
    chatId: uniqueChatId('small'),
    taskIdentifier: 'echo',
    startSession: startSessionVia(server),
    environment: { warn: () => {} },
    ...overrides,
  });
}

function transport(overrides: Partial<ConstructorParameters<typeof SessionChatTransport>[0]> = {}) {
  return new SessionChatTransport({
    baseURL: server.url,
    taskIdentifier: 'echo',
    startSession: startSessionVia(server),
    environment: { warn: () => {} },
    ...overrides,
  });
}

describe('closed sessions are marked closed wherever they are seen', () => {
  it('SESSION_CLOSED from startSession on a token refresh marks the chat closed', async () => {
    let calls = 0;
    const start = startSessionVia(server);
    const subject = client({
      startSession: async (input) => {
        calls++;
        if (calls > 1)
          throw new SessionClosedError({ operation: 'create session', closedReason: 'archived' });
        return start(input);
      },
    });
    await subject.preload();
    await expect(subject.tokens.refresh('manual')).rejects.toMatchObject({ code: 'SESSION_CLOSED' });
    expect(subject.getState()).toMatchObject({
      closed: true,
      closedReason: 'archived',
      status: { type: 'closed' },
    });
    subject.close();
  });

  it('a 409 on .out marks the chat closed (not just an error status)', async () => {
    const subject = client({ fetch: closedOut() });
    await subject.preload();
    const reading = (async () => {
      for await (const _ of subject.readOut({})) {
        // nothing arrives
      }
    })();
    await expect(reading).rejects.toMatchObject({ code: 'SESSION_CLOSED' });
    expect(subject.getState()).toMatchObject({ closed: true, status: { type: 'closed' } });
    subject.close();
  });
});

describe('appends', () => {
  it('TOKEN_UNAVAILABLE while an append gets its token is retried like a network error', async () => {
    let calls = 0;
    const start = startSessionVia(server);
    const subject = client({
      getAccessToken: async ({ chatId }) => {
        calls++;
        if (calls === 1) throw new Error('token endpoint blip');
        return (await start({ chatId, taskIdentifier: 'echo', clientData: undefined })).publicAccessToken;
      },
    });
    await subject.preload();
    subject.store.setState({ tokenExpiresAt: Date.now() - 1 }); // the next append must fetch one
    const result = await subject.append(
      userMessageChunk({ chatId: subject.chatId, message: userMessage('hi') }),
    );
    expect(result.attempts).toBe(2);
    expect(calls).toBe(2);
    subject.close();
  });
});

describe('the cursor is persisted only for what the consumer has', () => {
  it('turnLive stays true until the stream consumer has read the turn to its end', async () => {
    const chatId = uniqueChatId('handover');
    const persistence = memoryPersistence();
    const completed: number[] = [];
    const subject = transport({
      persistence,
      onEvent: (event) => {
        if (event.type === 'turn-completed') completed.push(event.seqNum);
      },
    });
    const stream = await subject.sendMessages({
      trigger: 'submit-message',
      chatId,
      messageId: undefined,
      messages: [userMessage('read me later')],
      abortSignal: undefined,
    });
    await waitFor(() => completed.length === 1, 5_000, 'the turn-complete');
    await subject.getClient(chatId).flushPersistence();
    expect(subject.getState(chatId).turnLive).toBe(true);
    expect(await persistence.load(chatId)).toMatchObject({ turnLive: true });
    const chunks = await readAll(stream);
    expect(chunks.length).toBeGreaterThan(3);
    expect(subject.getState(chatId).turnLive).toBe(false);
    await subject.getClient(chatId).flushPersistence();
    expect(await persistence.load(chatId)).toMatchObject({ turnLive: false });
    subject.close();
  });
});

describe('a replay whose turn-start cursor was trimmed', () => {
  it('is detected: the resumed stream ends empty and the turn is no longer live', async () => {
    const trimServer = await startEchoServer({ trimDelayMs: 0 });
    const chatId = uniqueChatId('trimmed-start');
    const persistence = memoryPersistence();
    await runConversation(trimServer, chatId, {
      script: [...SCRIPT, ...SCRIPT],
      transport: { persistence },
    });
    // A record from long ago: a turn "live" from cursor 0, trimmed away since.
    const record = (await persistence.load(chatId)) as Record<string, unknown>;
    // A record of the format before the ledger (no `turns`): read from its fields.
    await persistence.save(chatId, {
      ...record,
      turns: undefined,
      turnLive: true,
      turnStartCursor: 0,
    } as never);
    const events: string[] = [];
    const subject = new SessionChatTransport({
      baseURL: trimServer.url,
      taskIdentifier: 'echo',
      startSession: startSessionVia(trimServer),
      persistence,
      onEvent: (event) => events.push(event.type),
      environment: { warn: () => {} },
    });
    const stream = await subject.reconnectToStream({ chatId });
    expect(stream === null ? [] : await readAll(stream)).toEqual([]);
    expect(events).toContain('trimmed-cursor');
    expect(subject.getState(chatId).turnLive).toBe(false);
    subject.close();
    await trimServer.close();
  });
});

describe('bounded memory', () => {
  it('readOut pauses the network read while its consumer lags (the queue stops at 256 items)', async () => {
    let delivered = 0;
    let paused = 0;
    const records = (seqNum: number): ClassifiedRecord =>
      ({ kind: 'command', seqNum, operation: 'trim' }) as never;
    const iterable = iterateOut(
      async (handlers) => {
        for (let seq = 0; seq < 1_000; seq++) {
          handlers.onRecord(records(seq));
          delivered++;
          const pause = handlers.waitForCapacity?.();
          if (pause !== undefined) {
            paused++;
            await pause;
          }
        }
      },
      undefined,
      () => {},
    );
    const iterator = iterable[Symbol.asyncIterator]();
    const first = (await iterator.next()) as IteratorResult<ReadOutItem>;
    expect(first.done).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(delivered).toBeLessThanOrEqual(257);
    expect(paused).toBe(1);
    let read = 1;
    while (!(await iterator.next()).done) read++;
    expect(read).toBe(1_000);
  });

  it('the transport forgets idle chats it disconnected beyond the most recent 32', async () => {
    const subject = transport();
    const ids = Array.from({ length: 40 }, (_, index) => uniqueChatId(`many-${index}`));
    const busy = new TestChat({ id: ids[0] as string, transport: subject });
    await busy.sendMessage({ text: 'hello' });
    subject.disconnect(ids[0] as string);
    for (const chatId of ids.slice(1)) {
      await subject.preload(chatId);
      subject.disconnect(chatId);
    }
    const chats = (subject as unknown as { chats: Map<string, unknown> }).chats;
    expect(chats.size).toBe(32);
    expect(chats.has(ids[0] as string)).toBe(false);
    expect(chats.has(ids[39] as string)).toBe(true);
    subject.close();
  });
});

describe('configuration', () => {
  it.each([[undefined], [''], ['  ']])(
    'a baseURL of %j (an unset environment variable) is refused at once, naming baseURL',
    (baseURL) => {
      const options = {
        baseURL: baseURL as unknown as string,
        startSession: async () => ({ publicAccessToken: 't' }),
      };
      for (const make of [
        () => new SessionChatTransport(options),
        () => new SessionClient({ ...options, chatId: 'c' }),
      ]) {
        expect(make).toThrow(expect.objectContaining({ code: 'INVALID_INPUT', field: 'baseURL' }));
        expect(make).toThrow(/baseURL is .*http:\/\/localhost:3030/);
      }
    },
  );
});

describe('a send the page leaves before it reached the transport (noteIfLeaving)', () => {
  const leavingTransport = () => {
    const listeners = new Set<() => void>();
    const transport = new SessionChatTransport({
      baseURL: server.url,
      taskIdentifier: 'echo',
      startSession: startSessionVia(server),
      environment: {
        warn: () => {},
        onUnload: (listener) => {
          listeners.add(listener);
          return () => listeners.delete(listener);
        },
      },
    });
    return {
      transport,
      leave: () => {
        for (const listener of [...listeners]) listener();
      },
    };
  };
  const sendOf = (chatId: string, text: string) => ({
    chatId,
    trigger: 'submit-message' as const,
    messageId: undefined,
    messages: [{ id: `m-${chatId}`, role: 'user' as const, parts: [{ type: 'text' as const, text }] }],
    abortSignal: undefined,
  });

  it('is noted as sent (live, its append kept for whoever sends it again); nothing once it reached the transport', () => {
    const { transport, leave } = leavingTransport();
    const noted = uniqueChatId('left-send');
    transport.noteIfLeaving(sendOf(noted, 'hello'));
    const reached = uniqueChatId('reached-send');
    transport.noteIfLeaving(sendOf(reached, 'hello'))(); // unsubscribed: the transport notes it itself
    leave();
    expect(transport.getState(noted)).toMatchObject({
      turnLive: true,
      pendingAppend: { body: expect.stringContaining('hello') },
    });
    expect(transport.getState(reached)).toMatchObject({ turnLive: false, pendingAppend: undefined });
    transport.close();
  });

  it('a message over the size limit (413 before any request) is not noted: there is nothing to send again', () => {
    const { transport, leave } = leavingTransport();
    const chatId = uniqueChatId('left-too-large');
    transport.noteIfLeaving(sendOf(chatId, 'x'.repeat(2 * 1024 * 1024)));
    expect(leave).not.toThrow();
    expect(transport.getState(chatId)).toMatchObject({ turnLive: false, pendingAppend: undefined });
    transport.close();
  });
});
