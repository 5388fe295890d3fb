import type { UIMessage } from 'ai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type HistoryCursor,
  historyCursor,
  parseHistoryCursor,
  withHistoryCursor,
} from '../../src/client/history-cursor.js';
import { memoryPersistence, type PersistedChatRecord } from '../../src/client/persistence.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { SessionChatTransport } from '../../src/transport/session-chat-transport.js';
import {
  startSessionVia,
  TestChat,
  transcript,
  uniqueChatId,
  waitFor,
} from '../transport/support/dev-server-fixture.js';
import { pauseTurn, startMomentsServer } from '../transport/support/moments.js';

// History: a transcript the app saved in its own store, with `historyCursor` beside it, loaded
// on another page (its own empty persistence: another device, cleared storage) before the
// chat mounts. Against the dev server over loopback, library defaults throughout.

let server: DevServer;
const pages: Array<{ transport: SessionChatTransport; chatId: string }> = [];

beforeAll(async () => {
  server = await startMomentsServer();
});
afterEach(() => {
  for (const { transport, chatId } of pages.splice(0)) transport.disconnect(chatId);
});
afterAll(async () => {
  await server?.close();
});

/** One page: a transport with its own storage, and the AI SDK's own Chat on it. */
function openPage(chatId: string, history?: { messages: UIMessage[]; cursor: HistoryCursor }) {
  const records = new Map<string, PersistedChatRecord>();
  const transport = new SessionChatTransport({
    baseURL: server.url,
    taskIdentifier: 'echo',
    startSession: startSessionVia(server),
    persistence: withHistoryCursor(memoryPersistence(records), history?.cursor),
    environment: { warn: () => {} },
  });
  pages.push({ transport, chatId });
  const chat = new TestChat({ id: chatId, transport, messages: history?.messages ?? [] });
  return { transport, chat, records, client: () => transport.getClient(chatId) };
}

/** What the app saves: the messages and, read at the same moment, the cursor. */
function save(page: ReturnType<typeof openPage>) {
  const saved = {
    messages: structuredClone(page.chat.messages),
    cursor: historyCursor(page.client().getState()),
  };
  // Through JSON, as an app's store keeps it.
  const cursor = parseHistoryCursor(JSON.stringify(saved.cursor));
  if (cursor === undefined) throw new Error('the saved cursor did not parse');
  return { messages: saved.messages, cursor };
}

const replyOf = (text: string) => `Echo: ${text}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function turnEnded(chatId: string): Promise<void> {
  await waitFor(() => server.inspect(chatId)?.run?.state !== 'streaming', 10_000, 'the turn to end');
}

describe('history loaded before the chat mounts, cursor seeded from it', () => {
  it('a finished transcript: nothing is replayed on load, and the next turn shows once, after it', async () => {
    const chatId = uniqueChatId('history-finished');
    const first = openPage(chatId);
    await first.chat.sendMessage({ text: 'first message' });
    await waitFor(() => first.chat.status === 'ready' && first.chat.messages.length === 2);
    await turnEnded(chatId);
    const saved = save(first);
    expect(saved.cursor.cursor).toBe(first.client().getState().lastEventId);
    first.transport.disconnect(chatId);

    const second = openPage(chatId, saved);
    await second.chat.resumeStream();
    expect(transcript(second.chat.messages)).toEqual(transcript(saved.messages));
    // Read on from the cursor, found no turn after it: not live, nothing shown.
    await waitFor(() => !second.client().getState().turnLive, 5_000, 'the read after the cursor to settle');
    expect(second.client().getState().lastEventId).toBeGreaterThanOrEqual(saved.cursor.cursor ?? 0);
    expect(transcript(second.chat.messages)).toEqual(transcript(saved.messages));

    await second.chat.sendMessage({ text: 'second message' });
    await waitFor(() => second.chat.status === 'ready' && second.chat.messages.length === 4);
    expect(transcript(second.chat.messages)).toEqual([
      'user: first message',
      `assistant: ${replyOf('first message')}`,
      'user: second message',
      `assistant: ${replyOf('second message')}`,
    ]);
    expect(second.chat.error).toBeUndefined();
  });

  it('a reply live when the page closed resumes after loading: shown once, whole, after the saved turns', async () => {
    const chatId = uniqueChatId('history-live');
    const first = openPage(chatId);
    await first.chat.sendMessage({ text: 'an earlier turn' });
    await waitFor(() => first.chat.status === 'ready' && first.chat.messages.length === 2);
    await turnEnded(chatId);

    const text = 'a reply still streaming when the page closed';
    const pause = pauseTurn(chatId, text, 5);
    void first.chat.sendMessage({ text });
    await waitFor(() => pause.reached && (first.chat.messages.at(-1)?.role ?? '') === 'assistant', 10_000);
    // Saved mid-reply, the partial reply included (the app saved on a status change).
    const saved = save(first);
    expect(saved.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    first.transport.disconnect(chatId);

    const second = openPage(chatId, saved);
    const resumed = second.chat.resumeStream();
    await sleep(200);
    pause.release();
    await resumed;
    await waitFor(() => second.chat.status === 'ready');
    expect(transcript(second.chat.messages)).toEqual([
      'user: an earlier turn',
      `assistant: ${replyOf('an earlier turn')}`,
      `user: ${text}`,
      `assistant: ${replyOf(text)}`,
    ]);
    expect(second.chat.error).toBeUndefined();
    expect(second.client().getState().turnLive).toBe(false);
  });

  it('a reply that ended while the page was away is shown once on load (saved right after the send)', async () => {
    const chatId = uniqueChatId('history-ended');
    const first = openPage(chatId);
    const text = 'sent, then the page closed before the reply began';
    const pause = pauseTurn(chatId, text, 0);
    void first.chat.sendMessage({ text });
    await waitFor(() => pause.reached && first.client().getState().sessionId !== undefined, 10_000);
    const saved = save(first);
    expect(transcript(saved.messages)).toEqual([`user: ${text}`]);
    first.transport.disconnect(chatId);
    pause.release();
    await turnEnded(chatId);

    const second = openPage(chatId, saved);
    await second.chat.resumeStream();
    await waitFor(() => second.chat.status === 'ready');
    expect(transcript(second.chat.messages)).toEqual([`user: ${text}`, `assistant: ${replyOf(text)}`]);
    expect(second.chat.error).toBeUndefined();
  });

  it('a stored record where the transcript ends, or with its turn live, wins: the seed changes nothing', async () => {
    const chatId = uniqueChatId('history-stored');
    const stored: PersistedChatRecord = {
      version: 1,
      chatId,
      sessionId: 'session_stored',
      publicAccessToken: undefined,
      lastEventId: 12,
      turnLive: false,
      turnStartCursor: undefined,
      closed: false,
      closedReason: null,
    };
    const cursor = (value: number | undefined, sessionId = 'session_stored'): HistoryCursor => ({
      version: 1,
      chatId,
      sessionId,
      cursor: value,
    });
    const records = () => memoryPersistence(new Map([[chatId, stored]]));
    expect(await withHistoryCursor(records(), cursor(12)).load(chatId)).toEqual(stored);
    // Further along with its turn live (or stopped here): its own bookkeeping resumes that turn.
    const live: PersistedChatRecord = { ...stored, turnLive: true, turnStored: true, turnStartCursor: 5 };
    const liveRecords = memoryPersistence(new Map([[chatId, live]]));
    expect(await withHistoryCursor(liveRecords, cursor(5)).load(chatId)).toEqual(live);
    const stopped: PersistedChatRecord = { ...stored, stoppedTurn: 'started' };
    const stoppedRecords = memoryPersistence(new Map([[chatId, stopped]]));
    expect(await withHistoryCursor(stoppedRecords, cursor(3)).load(chatId)).toEqual(stopped);
    // Further along, its turn over: the transcript was saved before that turn ended (another
    // tab's save had not happened yet): read on from the transcript's cursor, token kept.
    const withToken = memoryPersistence(new Map([[chatId, { ...stored, publicAccessToken: 'token' }]]));
    expect(await withHistoryCursor(withToken, cursor(3)).load(chatId)).toMatchObject({
      sessionId: 'session_stored',
      publicAccessToken: 'token',
      lastEventId: 3,
      turnLive: true,
      turnStartCursor: 3,
    });
    // Behind the transcript: read on from the transcript's cursor.
    expect(await withHistoryCursor(records(), cursor(20)).load(chatId)).toMatchObject({
      sessionId: 'session_stored',
      lastEventId: 20,
      turnLive: true,
      turnStartCursor: 20,
    });
    // Another chat, a later load, or a transcript without a session: untouched.
    const adapter = withHistoryCursor(records(), cursor(20));
    expect(await adapter.load('another-chat')).toBeUndefined();
    await adapter.load(chatId);
    expect(await adapter.load(chatId)).toEqual(stored);
    const sessionless: HistoryCursor = { version: 1, chatId, sessionId: undefined, cursor: 4 };
    expect(await withHistoryCursor(undefined, sessionless).load(chatId)).toBeUndefined();
  });

  it('reads back only a well-formed saved cursor', () => {
    expect(parseHistoryCursor({ version: 1, chatId: 'c', sessionId: 's', cursor: 3 })).toEqual({
      version: 1,
      chatId: 'c',
      sessionId: 's',
      cursor: 3,
    });
    expect(parseHistoryCursor('{"version":1,"chatId":"c"}')).toEqual({
      version: 1,
      chatId: 'c',
      sessionId: undefined,
      cursor: undefined,
    });
    for (const bad of [null, 'nope', { version: 2, chatId: 'c' }, { version: 1, chatId: 'c', cursor: -1 }])
      expect(parseHistoryCursor(bad)).toBeUndefined();
  });
});
