import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryPersistence, type PersistedChatRecord } from '../../src/client/persistence.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { SessionChatTransport } from '../../src/transport/session-chat-transport.js';
import type { SessionChatTransportOptions } from '../../src/transport/transport-options.js';
import {
  readAll,
  recordingFetch,
  startEchoServer,
  startSessionVia,
  TestChat,
  transcript,
  uniqueChatId,
  userMessage,
  waitFor,
} from './support/dev-server-fixture.js';

/**
 * The turn ledger is what persists (issue 18): a reload restores the live turn, its stops and
 * queued actions from the record's `turns`, and a record of the released format (live-turn
 * fields, no `turns`) still loads, read into ledger entries. Dev server over loopback,
 * default options.
 */

let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer();
});
afterAll(async () => {
  await server.close();
});

function transportFor(overrides: Partial<SessionChatTransportOptions> = {}) {
  return new SessionChatTransport({
    baseURL: server.url,
    taskIdentifier: 'echo',
    startSession: startSessionVia(server),
    ...overrides,
    environment: { warn: () => {}, ...overrides.environment },
  });
}

/** What the released format (before the ledger) wrote for `state`: the live-turn fields only. */
function releasedFormat(record: PersistedChatRecord): PersistedChatRecord {
  const { turns: _turns, ...fields } = record;
  return fields;
}

describe('the persisted turn ledger', () => {
  it('a record saved mid-reply holds the live turn as a ledger entry, and a reload resumes from it', async () => {
    const records = new Map<string, PersistedChatRecord>();
    const chatId = uniqueChatId('ledger-mid-reply');
    const first = transportFor({ persistence: memoryPersistence(records) });
    const chat = new TestChat({ id: chatId, transport: first });
    await chat.sendMessage({ text: 'an earlier turn' });
    void chat.sendMessage({ text: 'a reply read halfway' }, { metadata: { delayMs: 40 } });
    const client = first.getClient(chatId);
    await waitFor(() => client.getState().turnInSeq === 1, 5_000, 'the second append to be stored');
    const start = client.getState().turnStartCursor as number;
    await waitFor(() => (client.getState().lastEventId ?? 0) > start + 3, 5_000, 'part of the reply');
    await client.flushPersistence();
    first.disconnect(chatId);
    first.close();
    const saved = records.get(chatId) as PersistedChatRecord;
    expect(saved.turns?.find((turn) => turn.state === 'stored' || turn.state === 'started')).toMatchObject({
      kind: 'message',
      seq: 1,
      priorSeq: 0,
      startCursor: start,
    });

    const second = transportFor({ persistence: memoryPersistence(records) });
    const resumed = new TestChat({ id: chatId, transport: second });
    await resumed.resumeStream();
    expect(resumed.error).toBeUndefined();
    expect(transcript(resumed.messages)).toEqual(['assistant: Echo: a reply read halfway']);
    await waitFor(() => !second.getState(chatId).turnLive, 2_000, 'the turn to be over');
    second.close();
  });

  it('a record of the released format saved mid-reply (an upgrade mid-turn) loads and resumes the reply to its end', async () => {
    const records = new Map<string, PersistedChatRecord>();
    const chatId = uniqueChatId('ledger-upgrade-mid-reply');
    const first = transportFor({ persistence: memoryPersistence(records) });
    const chat = new TestChat({ id: chatId, transport: first });
    await chat.sendMessage({ text: 'an earlier turn' });
    void chat.sendMessage({ text: 'a reply the upgrade interrupts' }, { metadata: { delayMs: 40 } });
    const client = first.getClient(chatId);
    await waitFor(() => client.getState().turnInSeq === 1, 5_000, 'the second append to be stored');
    const start = client.getState().turnStartCursor as number;
    await waitFor(() => (client.getState().lastEventId ?? 0) > start + 3, 5_000, 'part of the reply');
    await client.flushPersistence();
    first.disconnect(chatId);
    first.close();
    // The page reloads on the new build with what the released build saved.
    const old = releasedFormat(records.get(chatId) as PersistedChatRecord);
    expect(old).toMatchObject({ turnLive: true, turnStored: true, turnStartCursor: start, turnInSeq: 1 });
    records.set(chatId, old);

    const wire = recordingFetch();
    const second = transportFor({ persistence: memoryPersistence(records), fetch: wire.fetch });
    await second.getClient(chatId).ready();
    expect(second.getState(chatId).turns).toEqual([
      { id: 0, kind: 'found', state: 'stored', seq: 1, priorSeq: 0, startCursor: start },
    ]);
    const resumed = new TestChat({ id: chatId, transport: second });
    await resumed.resumeStream();
    expect(resumed.error).toBeUndefined();
    expect(transcript(resumed.messages)).toEqual(['assistant: Echo: a reply the upgrade interrupts']);
    const outs = wire.requests.filter((request) => request.path.endsWith('/out'));
    expect(outs[0]?.headers.get('x-peek-settled')).toBeNull(); // a stored turn: no settled-peek
    await waitFor(() => !second.getState(chatId).turnLive, 2_000, 'the turn to be over');
    // Written back in the ledger's format: the turn is over.
    await second.getClient(chatId).flushPersistence();
    expect(records.get(chatId)).toMatchObject({ turnLive: false, turns: [{ id: 0, state: 'over' }] });
    // The next message goes on from the converted ledger.
    await resumed.sendMessage({ text: 'after the upgrade' });
    expect(transcript(resumed.messages).at(-1)).toBe('assistant: Echo: after the upgrade');
    second.close();
  });

  it('a send that went out while a reply streamed is the live turn once that reply is read to its end: a reload resumes it', async () => {
    const records = new Map<string, PersistedChatRecord>();
    const chatId = uniqueChatId('ledger-send-behind');
    const first = transportFor({ persistence: memoryPersistence(records) });
    const send = (text: string, delayMs: number) =>
      first.sendMessages({
        trigger: 'submit-message',
        chatId,
        messageId: undefined,
        messages: [userMessage(text)],
        abortSignal: undefined,
        metadata: { delayMs },
      });
    const earlier = await send('the earlier reply', 30);
    const reader = earlier.getReader();
    await reader.read(); // its reply streams
    reader.releaseLock();
    const behind = await send('the reply sent behind it, slowly', 80);
    await readAll(earlier); // read to its end: that turn is over for this page
    const client = first.getClient(chatId);
    await waitFor(() => client.getState().turns[0]?.state === 'over', 5_000, 'the earlier turn to be over');
    // The send behind it is the chat's live turn: a reload, a stop or another tab sees it.
    expect(client.getState()).toMatchObject({
      turnLive: true,
      turnStored: true,
      turnInSeq: 1,
      turnPriorInSeq: 0,
    });
    await client.flushPersistence();
    void behind.cancel();
    first.disconnect(chatId);
    first.close();

    const second = transportFor({ persistence: memoryPersistence(records) });
    const resumed = new TestChat({ id: chatId, transport: second });
    await resumed.resumeStream();
    expect(resumed.error).toBeUndefined();
    expect(transcript(resumed.messages)).toEqual(['assistant: Echo: the reply sent behind it, slowly']);
    await waitFor(() => !second.getState(chatId).turnLive, 2_000, 'the turn to be over');
    second.close();
  });

  it('stopping a send that went out while a reply streamed, once that reply was read to its end, appends its stop', async () => {
    const chatId = uniqueChatId('ledger-stop-behind');
    const transport = transportFor();
    const send = (text: string, delayMs: number) =>
      transport.sendMessages({
        trigger: 'submit-message',
        chatId,
        messageId: undefined,
        messages: [userMessage(text)],
        abortSignal: undefined,
        metadata: { delayMs, repeat: 6 },
      });
    const earlier = await send('the earlier reply', 20);
    const reader = earlier.getReader();
    await reader.read();
    reader.releaseLock();
    const behind = await send('the reply sent behind it, slowly', 80);
    await readAll(earlier);
    const client = transport.getClient(chatId);
    await waitFor(() => client.getState().turns[0]?.state === 'over', 5_000, 'the earlier turn to be over');
    await waitFor(() => server.inspect(chatId)?.in.nextSeq === 2, 5_000, 'both messages stored');
    await transport.stop(chatId);
    expect(server.inspect(chatId)?.in.nextSeq).toBe(3); // message, message, stop
    await readAll(behind).catch(() => undefined);
    transport.close();
  });
});
