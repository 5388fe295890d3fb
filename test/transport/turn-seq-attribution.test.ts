import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  memoryPersistence,
  type PersistedChatRecord,
  type SessionPersistence,
} from '../../src/client/persistence.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { SessionChatTransport } from '../../src/transport/session-chat-transport.js';
import type { SessionChatTransportOptions } from '../../src/transport/transport-options.js';
import {
  startEchoServer,
  startSessionVia,
  TestChat,
  transcript,
  uniqueChatId,
  waitFor,
} from './support/dev-server-fixture.js';
import { markLive } from './support/live-mark.js';
import { pauseTurn, startMomentsServer } from './support/moments.js';

/**
 * Issue 18 items 17 and 18, and the matrix sequences they share a cause with: a turn this
 * page appended (a message, an action) is attributed by its own `.in` seq, also when it is
 * resumed (a remount, a reload), never as "the first turn after the start cursor". Against
 * the dev server over loopback, with the library's default options.
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

const lastAssistant = (chat: TestChat) =>
  transcript(chat.messages)
    .filter((line) => line.startsWith('assistant:'))
    .at(-1);

describe('item 17: an action’s output is attributed by the action’s seq', () => {
  it('an action right after a stop mid-reply shows its own output, not the stopped turn’s end', async () => {
    const chatId = uniqueChatId('action-after-stop');
    const transport = transportFor();
    const chat = new TestChat({ id: chatId, transport });
    const sending = chat.sendMessage(
      { text: 'a long reply that will be stopped' },
      { metadata: { delayMs: 30, repeat: 8 } },
    );
    await waitFor(() => chat.status === 'streaming', 5_000, 'the reply to stream');
    await chat.stop();
    await sending;
    await transport.sendAction(chatId, { type: 'shout' });
    await chat.resumeStream();
    expect(chat.error).toBeUndefined();
    expect(lastAssistant(chat)).toBe('assistant: SHOUT');
    await waitFor(() => !transport.getState(chatId).turnLive, 5_000, 'the action to be over');
    transport.close();
  });

  it('two actions in a row, each output resumed in turn: both shown, each once', async () => {
    const chatId = uniqueChatId('two-actions');
    const transport = transportFor();
    const chat = new TestChat({ id: chatId, transport });
    await chat.sendMessage({ text: 'hello' });
    await transport.sendAction(chatId, { type: 'shout' });
    await transport.sendAction(chatId, { type: 'shout' });
    await chat.resumeStream();
    await chat.resumeStream();
    expect(chat.error).toBeUndefined();
    expect(transcript(chat.messages)).toEqual([
      'user: hello',
      'assistant: Echo: hello',
      'assistant: SHOUT',
      'assistant: SHOUT',
    ]);
    await waitFor(() => !transport.getState(chatId).turnLive, 5_000, 'the actions to be over');
    transport.close();
  });

  it('an unplanned moment: resumed while the action’s append is still unanswered, the output shows once the seq is known', async () => {
    const chatId = uniqueChatId('action-resume-in-flight');
    const slowActionAnswer: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      const body = typeof init?.body === 'string' ? init.body : '';
      if (!body.includes('"trigger":"action"')) return response;
      const text = await response.text();
      await new Promise((resolve) => setTimeout(resolve, 300));
      return new Response(text, { status: response.status, headers: response.headers });
    };
    const transport = transportFor({ fetch: slowActionAnswer });
    const chat = new TestChat({ id: chatId, transport });
    await chat.sendMessage({ text: 'hello' });
    const acting = transport.sendAction(chatId, { type: 'shout' });
    await waitFor(() => transport.getState(chatId).turnLive, 5_000, 'the action to go live');
    expect(transport.getState(chatId).turnInSeq).toBeUndefined(); // its answer is still on the way
    await chat.resumeStream();
    await acting;
    expect(chat.error).toBeUndefined();
    expect(transcript(chat.messages)).toEqual(['user: hello', 'assistant: Echo: hello', 'assistant: SHOUT']);
    transport.close();
  });

  it('a page reloaded after its action was stored resumes the action’s output, not a stopped turn’s end', async () => {
    const records = new Map<string, PersistedChatRecord>();
    const chatId = uniqueChatId('action-reload');
    const transport = transportFor({ persistence: memoryPersistence(records) });
    const chat = new TestChat({ id: chatId, transport });
    const sending = chat.sendMessage(
      { text: 'a long reply that will be stopped' },
      { metadata: { delayMs: 30, repeat: 8 } },
    );
    await waitFor(() => chat.status === 'streaming', 5_000, 'the reply to stream');
    await chat.stop();
    await sending;
    await transport.sendAction(chatId, { type: 'shout' });
    await transport.getClient(chatId).flushPersistence();
    transport.close();

    const reloaded = transportFor({ persistence: memoryPersistence(records) });
    const resumed = new TestChat({ id: chatId, transport: reloaded });
    await resumed.resumeStream();
    expect(resumed.error).toBeUndefined();
    expect(lastAssistant(resumed)).toBe('assistant: SHOUT');
    reloaded.close();
  });
});

describe('item 18: a chat saved as live whose run never writes again', () => {
  it('a new message’s reply is shown in its own stream, not taken by the resumed one, and never TURN_REJECTED', async () => {
    const records = new Map<string, PersistedChatRecord>();
    const chatId = uniqueChatId('stale-live');
    const transport = transportFor({ persistence: memoryPersistence(records) });
    const chat = new TestChat({ id: chatId, transport });
    await chat.sendMessage({ text: 'an earlier turn' });
    const client = transport.getClient(chatId);
    // What a page saved that went away at the moment its turn went live and never learnt the
    // turn's end: the record says live, at the edge, with nothing more to come on `.out`.
    markLive(client.store, {
      turnStored: true,
      turnStartCursor: client.getState().lastEventId,
    });
    await client.flushPersistence();
    transport.close();

    const reloaded = transportFor({ persistence: memoryPersistence(records) });
    const errors: unknown[] = [];
    const resumed = new TestChat({
      id: chatId,
      transport: reloaded,
      messages: chat.messages,
      onError: (error) => errors.push(error),
    });
    void resumed.resumeStream();
    await new Promise((resolve) => setTimeout(resolve, 300));
    await resumed.sendMessage({ text: 'are you there?' });
    expect(errors).toEqual([]);
    expect(transcript(resumed.messages).slice(-2)).toEqual([
      'user: are you there?',
      'assistant: Echo: are you there?',
    ]);
    reloaded.close();
  });
});

describe('queued actions persist: a reload shows each queued output once', () => {
  it('two actions stored behind a live turn, then a reload before any was shown: both outputs, each once, in turn', async () => {
    const records = new Map<string, PersistedChatRecord>();
    const chatId = uniqueChatId('queued-reload');
    const transport = transportFor({ persistence: memoryPersistence(records) });
    const chat = new TestChat({ id: chatId, transport });
    await chat.sendMessage({ text: 'hello' });
    await transport.sendAction(chatId, { type: 'shout' });
    // Stored while the first action's turn is live: queued behind it.
    await transport.sendAction(chatId, { type: 'shout' });
    const client = transport.getClient(chatId);
    expect(client.getState().queuedTurns).toHaveLength(1);
    await client.flushPersistence();
    const saved = structuredClone(chat.messages);
    transport.close();

    const reloaded = transportFor({ persistence: memoryPersistence(records) });
    const resumed = new TestChat({ id: chatId, transport: reloaded, messages: saved });
    await resumed.resumeStream();
    await resumed.resumeStream();
    expect(resumed.error).toBeUndefined();
    expect(transcript(resumed.messages)).toEqual([
      'user: hello',
      'assistant: Echo: hello',
      'assistant: SHOUT',
      'assistant: SHOUT',
    ]);
    await waitFor(() => !reloaded.getState(chatId).turnLive, 5_000, 'the actions to be over');
    expect(reloaded.getState(chatId).queuedTurns).toEqual([]);
    // Nothing more to resume: a third resume finds no live turn.
    await resumed.resumeStream();
    expect(transcript(resumed.messages)).toHaveLength(4);
    reloaded.close();
  });

  it('a reload after the first queued output was shown resumes the second, once', async () => {
    const records = new Map<string, PersistedChatRecord>();
    const chatId = uniqueChatId('queued-reload-second');
    const transport = transportFor({ persistence: memoryPersistence(records) });
    const chat = new TestChat({ id: chatId, transport });
    await chat.sendMessage({ text: 'hello' });
    await transport.sendAction(chatId, { type: 'shout' });
    await transport.sendAction(chatId, { type: 'shout' });
    await transport.sendAction(chatId, { type: 'shout' });
    await chat.resumeStream(); // the first action's output, on this page
    await transport.getClient(chatId).flushPersistence();
    const saved = structuredClone(chat.messages);
    transport.close();

    const reloaded = transportFor({ persistence: memoryPersistence(records) });
    const resumed = new TestChat({ id: chatId, transport: reloaded, messages: saved });
    await resumed.resumeStream();
    await resumed.resumeStream();
    await resumed.resumeStream();
    expect(resumed.error).toBeUndefined();
    expect(transcript(resumed.messages)).toEqual([
      'user: hello',
      'assistant: Echo: hello',
      'assistant: SHOUT',
      'assistant: SHOUT',
      'assistant: SHOUT',
    ]);
    await waitFor(() => !reloaded.getState(chatId).turnLive, 5_000, 'the actions to be over');
    reloaded.close();
  });
});

describe('a silent live turn is not taken for begun (the matrix cell second tab @ append stored, no chunk yet)', () => {
  it('the trim after the last turn-complete moves the live turn’s start cursor; a second tab then shows only its own reply', async () => {
    const own = await startMomentsServer();
    const records = new Map<string, PersistedChatRecord>();
    const chatId = uniqueChatId('silent-turn-second-tab');
    const page = (persistence: SessionPersistence) =>
      transportFor({ baseURL: own.url, startSession: startSessionVia(own), persistence });
    const first = page(memoryPersistence(records));
    const chat = new TestChat({ id: chatId, transport: first });
    await chat.sendMessage({ text: 'hello' });
    const pause = pauseTurn(chatId, 'a reply slow to begin', 0);
    const sending = chat.sendMessage({ text: 'a reply slow to begin' });
    const client = first.getClient(chatId);
    const lastOnOut = () => (own.inspect(chatId)?.out.nextSeq ?? 0) - 1;
    await waitFor(
      () => pause.reached && client.getState().turnStored && client.getState().lastEventId === lastOnOut(),
      5_000,
      'the stored, silent turn, read to the trim',
    );
    // Nothing of the live turn was written: its start cursor is the cursor (the trim is no turn's).
    expect(client.getState().turnStartCursor).toBe(client.getState().lastEventId);
    await client.flushPersistence();

    const tab = page(memoryPersistence(records));
    const other = new TestChat({ id: chatId, transport: tab, messages: structuredClone(chat.messages) });
    const otherSending = other.sendMessage({ text: 'from the other tab' });
    await waitFor(() => (own.inspect(chatId)?.in.nextSeq ?? 0) === 3, 5_000, 'the other tab’s append');
    pause.release();
    await Promise.all([sending, otherSending]);
    expect(other.error).toBeUndefined();
    expect(transcript(other.messages).slice(-2)).toEqual([
      'user: from the other tab',
      'assistant: Echo: from the other tab',
    ]);
    expect(lastAssistant(chat)).toBe('assistant: Echo: a reply slow to begin');
    first.close();
    tab.close();
    await own.close();
  });
});
