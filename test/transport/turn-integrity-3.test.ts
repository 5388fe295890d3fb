import type { UIMessageChunk } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../src/client/events.js';
import { memoryPersistence, type PersistedChatRecord } from '../../src/client/persistence.js';
import { type DevServer, defineAgent, echoAgent } from '../../src/dev-server/index.js';
import { AuthError, ServerError } from '../../src/errors/http-error.js';
import { submitChunk } from '../../src/protocol/input-chunks.js';
import { serializeAppend } from '../../src/protocol/validate.js';
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
import { markLive } from './support/live-mark.js';
import { virtualClock } from './support/virtual-clock.js';

/**
 * Issue 18 (turn integrity, third pass), against the dev server over loopback with the
 * library's DEFAULT options.
 */

function urlOf(input: Parameters<typeof fetch>[0]): URL {
  return new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
}

/** The echo agent, but its model takes `firstChunkDelayMs` before the first chunk (a cold start). */
const slowStartAgent = defineAgent({
  ...echoAgent,
  id: 'slow-start',
  async *run(context) {
    await new Promise((resolve) => setTimeout(resolve, 1_600));
    const source = echoAgent.run(context) as AsyncIterable<UIMessageChunk>;
    for await (const chunk of source) yield chunk;
  },
});

let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer({ agents: [echoAgent, slowStartAgent] });
});
afterAll(async () => {
  await server.close();
});

/**
 * A transport on `target` (default: the file's server). Tests that arm server faults use a
 * server of their own: a fault meets the next request of any chat, and a late request of an
 * earlier test (a stop, a reconnect) must never take it.
 */
function transportFor(
  taskIdentifier: string,
  overrides: Partial<SessionChatTransportOptions> = {},
  target: DevServer = server,
) {
  const events: SessionEvent[] = [];
  const transport = new SessionChatTransport({
    baseURL: target.url,
    taskIdentifier,
    startSession: startSessionVia(target),
    onEvent: (event) => events.push(event),
    ...overrides,
    environment: { warn: () => {}, ...overrides.environment },
  });
  return { transport, events };
}

describe('item 1: a reload after the append was stored, before the first chunk', () => {
  it('resumes the whole reply (no settled-peek on a turn this page saw stored) and ends with its finish', async () => {
    const records = new Map<string, PersistedChatRecord>();
    const chatId = uniqueChatId('reload-before-first-chunk');
    const first = transportFor('slow-start', { persistence: memoryPersistence(records) }).transport;
    const chat = new TestChat({ id: chatId, transport: first });
    void chat.sendMessage({ text: 'a reply that takes a while to begin' });
    await waitFor(() => server.inspect(chatId)?.in.nextSeq === 1, 5_000, 'the append to be stored');
    await waitFor(() => first.getState(chatId).turnStored, 5_000, 'the append answer');
    await first.getClient(chatId).flushPersistence();
    first.disconnect(chatId); // the page reloads: nothing of the reply has arrived
    first.close();

    const wire = recordingFetch();
    const second = transportFor('slow-start', {
      persistence: memoryPersistence(records),
      fetch: wire.fetch,
    }).transport;
    const resumed = new TestChat({ id: chatId, transport: second });
    await resumed.resumeStream();
    expect(resumed.error).toBeUndefined();
    expect(transcript(resumed.messages)).toEqual(['assistant: Echo: a reply that takes a while to begin']);
    const outs = wire.requests.filter((request) => request.path.endsWith('/out'));
    expect(outs[0]?.headers.get('x-peek-settled')).toBeNull();
    await waitFor(() => !second.getState(chatId).turnLive, 2_000, 'the turn to be over');
    second.close();
  });

  it('a turn whose append was still unanswered at the reload peeks (it may never have been stored)', async () => {
    const records = new Map<string, PersistedChatRecord>();
    const chatId = uniqueChatId('reload-unanswered');
    const transport = transportFor('echo', { persistence: memoryPersistence(records) }).transport;
    const chat = new TestChat({ id: chatId, transport });
    await chat.sendMessage({ text: 'an earlier turn' });
    const client = transport.getClient(chatId);
    // What a page that reloaded with its append in flight saved, the append lost on the way.
    const cursor = client.getState().lastEventId;
    markLive(client.store, { turnStored: false, turnStartCursor: cursor });
    await client.flushPersistence();
    transport.close();
    const wire = recordingFetch();
    const second = transportFor('echo', {
      persistence: memoryPersistence(records),
      fetch: wire.fetch,
    }).transport;
    const resumed = new TestChat({ id: chatId, transport: second });
    const started = Date.now();
    await resumed.resumeStream();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(resumed.messages).toEqual([]);
    expect(wire.requests.find((r) => r.path.endsWith('/out'))?.headers.get('x-peek-settled')).toBe('1');
    // Settled with nothing of it on .out: the turn is not live (a later resume costs no read).
    expect(second.getState(chatId).turnLive).toBe(false);
    second.close();
  });
});

/** A fetch that notes when each request went out and when its response headers arrived. */
function wireLog(delayMs: number) {
  const log: { at: number; what: string }[] = [];
  const fetchWithDelay: typeof fetch = async (input, init) => {
    const url = urlOf(input);
    const kind = url.pathname.endsWith('/out')
      ? 'out'
      : url.pathname.endsWith('/append')
        ? 'append'
        : 'other';
    log.push({ at: performance.now(), what: `${kind} request` });
    const response = await fetch(input, init);
    await new Promise((resolve) => setTimeout(resolve, delayMs)); // a network's round trip
    log.push({ at: performance.now(), what: `${kind} response` });
    return response;
  };
  return { log, fetch: fetchWithDelay };
}

describe('item 2: a follow-up message pays no round trip before its append', () => {
  it('with 50 ms added to every response, the turn-3 append goes out before any .out response of that turn', async () => {
    const chatId = uniqueChatId('follow-up-rtt');
    const wire = wireLog(50);
    const { transport, events } = transportFor('echo', { fetch: wire.fetch });
    const chat = new TestChat({ id: chatId, transport });
    await chat.sendMessage({ text: 'one' });
    await chat.sendMessage({ text: 'two' });
    const mark = wire.log.length;
    await chat.sendMessage({ text: 'three' });
    const turn3 = wire.log.slice(mark).map((entry) => entry.what);
    const appendAt = turn3.indexOf('append request');
    const firstOutResponse = turn3.indexOf('out response');
    expect(appendAt).toBeGreaterThanOrEqual(0);
    expect(appendAt).toBeLessThan(firstOutResponse);
    expect(transcript(chat.messages)).toEqual([
      'user: one',
      'assistant: Echo: one',
      'user: two',
      'assistant: Echo: two',
      'user: three',
      'assistant: Echo: three',
    ]);
    // The .out read of turn 3 starts at the cursor (no read from one record before it).
    const firstChunks = events.filter((event) => event.type === 'first-chunk');
    expect(firstChunks).toHaveLength(3);
    transport.close();
  });

  it('keeps the two-device case right: a second device’s turn between our turns is never shown as ours', async () => {
    const chatId = uniqueChatId('follow-up-two-devices');
    const mine = transportFor('echo').transport;
    const chat = new TestChat({ id: chatId, transport: mine });
    await chat.sendMessage({ text: 'mine one' });
    // Another device (its own storage) sends while this page is idle; its reply is slow.
    const other = transportFor('echo').transport;
    const otherChat = new TestChat({ id: chatId, transport: other });
    const othersTurn = otherChat.sendMessage(
      { text: 'from the other device, slowly' },
      { metadata: { delayMs: 60 } },
    );
    await waitFor(() => server.inspect(chatId)?.in.nextSeq === 2, 5_000, 'the other device’s append');
    await chat.sendMessage({ text: 'mine two' });
    await othersTurn;
    expect(chat.error).toBeUndefined();
    expect(transcript(chat.messages)).toEqual([
      'user: mine one',
      'assistant: Echo: mine one',
      'user: mine two',
      'assistant: Echo: mine two',
    ]);
    mine.close();
    other.close();
  });

  it('a reply that finished after a newer send overlapped it is not kept as a draining reader', async () => {
    const chatId = uniqueChatId('no-draining-growth');
    const { transport } = transportFor('echo');
    const send = (text: string, delayMs: number) =>
      transport.sendMessages({
        trigger: 'submit-message',
        chatId,
        messageId: undefined,
        messages: [userMessage(text)],
        abortSignal: undefined,
        metadata: { delayMs },
      });
    const first = await send('a slow first reply, read to its own end', 40);
    const firstRead = readAll(first);
    await new Promise((resolve) => setTimeout(resolve, 100)); // the first reply streams
    const second = await send('an overlapping second message', 0);
    await Promise.all([firstRead, readAll(second)]);
    const entry = (
      transport as unknown as { chats: Map<string, { draining: Set<unknown> | undefined }> }
    ).chats.get(chatId);
    expect(entry).toBeDefined();
    // Made on first use and dropped once empty.
    expect(entry?.draining?.size ?? 0).toBe(0);
    transport.close();
  });
});

describe('item 8: a transient error from the app’s route during a token refresh is retried', () => {
  it('a 503 from the route (typed SERVER_ERROR) on the refresh after an expired token does not fail the send', async () => {
    const own = await startEchoServer();
    const chatId = uniqueChatId('route-503-refresh');
    const start = startSessionVia(own);
    let tokenCalls = 0;
    const { transport } = transportFor(
      'echo',
      {
        getAccessToken: async ({ chatId: id }) => {
          tokenCalls++;
          if (tokenCalls === 1) throw new ServerError({ status: 503, operation: 'token (route)' });
          return (await start({ chatId: id, taskIdentifier: 'echo', clientData: undefined }))
            .publicAccessToken;
        },
      },
      own,
    );
    const chat = new TestChat({ id: chatId, transport });
    await chat.sendMessage({ text: 'before the hour passed' });
    own.faults.expireTokens(); // the idle tab's token is past its lifetime
    await chat.sendMessage({ text: 'after the hour' });
    expect(chat.error).toBeUndefined();
    expect(tokenCalls).toBeGreaterThanOrEqual(2);
    expect(transcript(chat.messages).slice(2)).toEqual([
      'user: after the hour',
      'assistant: Echo: after the hour',
    ]);
    transport.close();
    await own.close();
  });
});

describe('item 9: an append whose 200 body stalls after the headers', () => {
  it('is bounded like its headers (appendTimeoutMs): the turn ends, its reply shown once', async () => {
    const clock = virtualClock();
    const chatId = uniqueChatId('stalled-append-body');
    let stalled = 0;
    const stallingBody: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      const url = urlOf(input);
      if (!url.pathname.endsWith('/in/append') || stalled > 0) return response;
      stalled++;
      await response.text(); // stored; its body never reaches the client
      const body = new ReadableStream<Uint8Array>({ start() {} });
      return new Response(body, { status: 200, headers: response.headers });
    };
    const { transport } = transportFor('echo', { fetch: stallingBody, environment: clock.environment });
    const chat = new TestChat({ id: chatId, transport });
    const sending = chat.sendMessage({ text: 'a stalled answer' });
    await waitFor(
      () => transcript(chat.messages)[1] === 'assistant: Echo: a stalled answer',
      5_000,
      'the reply',
    );
    await clock.advanceUntil(() => chat.status === 'ready', 25_000, { stepMs: 1_000, realMsPerStep: 5 });
    await sending;
    expect(chat.status).toBe('ready');
    expect(chat.error).toBeUndefined();
    expect(transcript(chat.messages)).toEqual([
      'user: a stalled answer',
      'assistant: Echo: a stalled answer',
    ]);
    transport.close();
  });
});

describe('item 10: never trust the local clock alone', () => {
  it('a 429 whose reset is already past on a clock an hour fast waits (server Date and a floor), not back to back', async () => {
    const own = await startEchoServer();
    const chatId = uniqueChatId('429-past-reset');
    const fast = { now: () => Date.now() + 3_600_000 };
    const wire = recordingFetch();
    const { transport } = transportFor('echo', { environment: fast, fetch: wire.fetch }, own);
    await transport.preload(chatId);
    own.faults.failAppends(3, 429, { resetInMs: 300 });
    const chat = new TestChat({ id: chatId, transport });
    const started = Date.now();
    await chat.sendMessage({ text: 'rate limited' });
    own.faults.reset();
    expect(chat.error).toBeUndefined();
    expect(wire.requests.filter((request) => request.path.endsWith('/in/append'))).toHaveLength(4);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    transport.close();
    await own.close();
  });

  it('a clock an hour fast does not refresh the token before every request', async () => {
    const chatId = uniqueChatId('fast-clock-token');
    const counter = { calls: 0 };
    const fast = { now: () => Date.now() + 3_700_000 };
    const transport = new SessionChatTransport({
      baseURL: server.url,
      taskIdentifier: 'echo',
      startSession: startSessionVia(server, counter),
      environment: { warn: () => {}, ...fast },
    });
    const chat = new TestChat({ id: chatId, transport });
    for (const text of ['one', 'two', 'three', 'four', 'five']) await chat.sendMessage({ text });
    expect(chat.error).toBeUndefined();
    expect(counter.calls).toBeLessThanOrEqual(2);
    transport.close();
  });
});

describe('item 11: a failing custom startSession', () => {
  it('rejects the send with TOKEN_UNAVAILABLE (the app’s error as its cause), not the raw error', async () => {
    const cause = new TypeError('cannot read properties of undefined');
    const transport = new SessionChatTransport({
      baseURL: server.url,
      taskIdentifier: 'echo',
      startSession: async () => {
        throw cause;
      },
      environment: { warn: () => {} },
    });
    const chat = new TestChat({ id: uniqueChatId('start-fails'), transport });
    await chat.sendMessage({ text: 'hello' });
    expect(chat.error).toMatchObject({ code: 'TOKEN_UNAVAILABLE', retryable: true, cause });
    transport.close();
  });
});

/** A fetch that answers the appends whose body matches `match` `ms` late (they are stored at once). */
function slowAnswers(match: (body: string) => boolean, ms: number): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    const body = typeof init?.body === 'string' ? init.body : '';
    const url = urlOf(input);
    if (!url.pathname.endsWith('/in/append') || !match(body)) return response;
    const text = await response.text();
    await new Promise((resolve) => setTimeout(resolve, ms));
    return new Response(text, { status: response.status, headers: response.headers });
  };
}
const isStop = (body: string) => body.includes('"kind":"stop"');
const isAction = (body: string) => body.includes('"trigger":"action"');

describe('items 13-15 and 19: stops', () => {
  it('item 13: stop, then send before the stop is acknowledged: the new reply is live, and stopping it appends a stop', async () => {
    const chatId = uniqueChatId('stop-then-send');
    const { transport } = transportFor('echo', { fetch: slowAnswers(isStop, 400) });
    const chat = new TestChat({ id: chatId, transport });
    const first = chat.sendMessage({ text: 'a long first message to stop' }, { metadata: { delayMs: 40 } });
    await waitFor(() => chat.status === 'streaming');
    await chat.stop();
    await first;
    const second = chat.sendMessage(
      { text: 'and a long second one too' },
      { metadata: { delayMs: 60, repeat: 6 } },
    );
    await waitFor(() => server.inspect(chatId)?.in.nextSeq === 3, 5_000, 'the second message to be stored');
    await new Promise((resolve) => setTimeout(resolve, 500)); // the stop's late answer arrives
    expect(transport.getState(chatId).turnLive).toBe(true);
    await transport.stop(chatId);
    expect(server.inspect(chatId)?.in.nextSeq).toBe(4); // message, stop, message, stop
    await second;
    transport.close();
  });

  it('item 14: a stop while an action’s append is in flight is appended after it', async () => {
    const chatId = uniqueChatId('stop-during-action');
    const { transport } = transportFor('echo', { fetch: slowAnswers(isAction, 300) });
    await transport.preload(chatId);
    const acting = transport.sendAction(chatId, { type: 'shout' });
    await waitFor(() => server.inspect(chatId)?.in.nextSeq === 1, 5_000, 'the action to be stored');
    await transport.stop(chatId);
    await acting;
    expect(server.inspect(chatId)?.in.nextSeq).toBe(2); // action, stop
    expect(transport.getState(chatId).turnLive).toBe(false);
    transport.close();
  });

  it('item 15: after a stopped send’s append is refused (4xx), the next message shows its own reply', async () => {
    const own = await startEchoServer();
    const chatId = uniqueChatId('stop-refused-send');
    let appendsOut = 0;
    // The refusal arrives only after the user stopped (the attempt is out): held until then, not
    // for a fixed time, which a loaded machine can outrun (the send then failed before the stop,
    // and there was nothing left to stop).
    let letRefusalIn = () => {};
    const stopped = new Promise<void>((resolve) => {
      letRefusalIn = resolve;
    });
    const slowRefusal: typeof fetch = async (input, init) => {
      const url = urlOf(input);
      if (!url.pathname.endsWith('/in/append')) return fetch(input, init);
      appendsOut++;
      // The refusal arrives even though the page aborts meanwhile (it was already on its way).
      const response = await fetch(input, { ...init, signal: undefined });
      if (response.status === 400) await stopped;
      return response;
    };
    const { transport } = transportFor('echo', { fetch: slowRefusal }, own);
    const chat = new TestChat({ id: chatId, transport });
    await chat.sendMessage({ text: 'first' });
    own.faults.failAppends(1, 400);
    const refused = chat.sendMessage({ text: 'refused' });
    // At least: a connection reset before the refusal is retried under the same part id (more
    // appends), and a poll under load may first look after that retry.
    await waitFor(
      () => appendsOut >= 2,
      15_000,
      () => `the refused attempt to go out (appends: ${appendsOut})`,
    );
    const stopping = chat.stop();
    await new Promise((resolve) => setTimeout(resolve, 50));
    letRefusalIn();
    await stopping;
    await refused;
    // The stop is stored right after the first message: the refused one never was.
    await waitFor(() => own.inspect(chatId)?.in.nextSeq === 2, 15_000, 'the stop to be stored');
    await waitFor(() => !transport.getState(chatId).turnLive, 15_000, 'the stop to be acknowledged');
    own.faults.reset();
    await chat.sendMessage({ text: 'next' });
    expect(chat.error).toBeUndefined();
    expect(transcript(chat.messages).slice(-2)).toEqual(['user: next', 'assistant: Echo: next']);
    transport.close();
    await own.close();
  });

  it('item 19: stop(chatId) and useChat’s abort of the same turn append one stop', async () => {
    const chatId = uniqueChatId('one-stop');
    const { transport } = transportFor('echo');
    const chat = new TestChat({ id: chatId, transport });
    const sending = chat.sendMessage({ text: 'stop me twice over' }, { metadata: { delayMs: 40 } });
    await waitFor(() => chat.status === 'streaming');
    const byId = transport.stop(chatId);
    await chat.stop();
    await byId;
    await sending;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(server.inspect(chatId)?.in.nextSeq).toBe(2); // the message and one stop
    transport.close();
  });

  it('item 19: a send’s .out answered X-Session-Settled (meant for peeks) and closed still shows its reply', async () => {
    const chatId = uniqueChatId('settled-on-send');
    let armed = false;
    const settledOnce: typeof fetch = async (input, init) => {
      const url = urlOf(input);
      if (armed && url.pathname.endsWith('/out')) {
        armed = false;
        const headers = { 'content-type': 'text/event-stream', 'x-session-settled': 'true' };
        return new Response('data: [DONE]\n\n', { status: 200, headers });
      }
      return fetch(input, init);
    };
    const { transport } = transportFor('echo', { fetch: settledOnce });
    const chat = new TestChat({ id: chatId, transport });
    await chat.sendMessage({ text: 'one' });
    armed = true;
    await chat.sendMessage({ text: 'two' });
    expect(transcript(chat.messages)).toEqual([
      'user: one',
      'assistant: Echo: one',
      'user: two',
      'assistant: Echo: two',
    ]);
    await waitFor(() => !transport.getState(chatId).turnLive, 2_000, 'the turn to be over');
    transport.close();
  });
});

describe('item 7: a chat left while its reply streams is never evicted', () => {
  it('after looking at 40 other chats (no persistence), coming back resumes the reply', async () => {
    const chatId = uniqueChatId('left-mid-reply');
    const { transport } = transportFor('echo');
    const chat = new TestChat({ id: chatId, transport });
    void chat.sendMessage({ text: 'a reply that streams for a while' }, { metadata: { delayMs: 50 } });
    await waitFor(() => chat.status === 'streaming');
    transport.disconnect(chatId);
    await new Promise((resolve) => setTimeout(resolve, 100)); // its reader has closed
    for (let index = 0; index < 40; index++) {
      const other = `${chatId}-other-${index}`;
      transport.getState(other);
      transport.disconnect(other);
    }
    const back = new TestChat({ id: chatId, transport });
    await back.resumeStream();
    expect(back.error).toBeUndefined();
    expect(transcript(back.messages)).toEqual(['assistant: Echo: a reply that streams for a while']);
    transport.close();
  });
});

describe('item 12: a session the server no longer knows is replaced, once', () => {
  it.each([['.out'], ['append']])(
    'a 404 on %s while the server still has the session (the start gives it back): its cursor stays, each reply stays its own',
    async (where) => {
      const own = await startEchoServer();
      const events: SessionEvent[] = [];
      const transport = new SessionChatTransport({
        baseURL: own.url,
        taskIdentifier: 'echo',
        startSession: startSessionVia(own),
        onEvent: (event) => events.push(event),
        environment: { warn: () => {} },
      });
      const chatId = uniqueChatId('spurious-404');
      const chat = new TestChat({ id: chatId, transport });
      await chat.sendMessage({ text: 'first' });
      const before = transport.getState(chatId).sessionId;
      if (where === '.out') own.faults.failOutConnections(1, 404);
      else own.faults.failAppends(1, 404);
      await chat.sendMessage({ text: 'second' });
      await chat.sendMessage({ text: 'third' });
      expect(chat.error).toBeUndefined();
      expect(transcript(chat.messages)).toEqual([
        'user: first',
        'assistant: Echo: first',
        'user: second',
        'assistant: Echo: second',
        'user: third',
        'assistant: Echo: third',
      ]);
      expect(events.filter((event) => event.type === 'session-replaced')).toEqual([]);
      expect(transport.getState(chatId).sessionId).toBe(before);
      expect(own.inspect(chatId)?.in.nextSeq).toBe(3);
      transport.close();
      await own.close();
    },
  );

  it('after a restarted dev server forgot every session: the next send gets a new session and its reply', async () => {
    const own = await startEchoServer();
    const events: SessionEvent[] = [];
    const records = new Map<string, PersistedChatRecord>();
    const transport = new SessionChatTransport({
      baseURL: own.url,
      taskIdentifier: 'echo',
      startSession: startSessionVia(own),
      persistence: memoryPersistence(records),
      onEvent: (event) => events.push(event),
      environment: { warn: () => {} },
    });
    const chatId = uniqueChatId('forgotten-session');
    const chat = new TestChat({ id: chatId, transport });
    await chat.sendMessage({ text: 'before the restart' });
    const before = transport.getState(chatId).sessionId;
    await own.restart({ keepState: false });
    await chat.sendMessage({ text: 'after the restart' });
    expect(chat.error).toBeUndefined();
    expect(transcript(chat.messages)).toEqual([
      'user: before the restart',
      'assistant: Echo: before the restart',
      'user: after the restart',
      'assistant: Echo: after the restart',
    ]);
    const replaced = events.filter((event) => event.type === 'session-replaced');
    expect(replaced).toHaveLength(1);
    expect(replaced[0]).toMatchObject({ previousSessionId: before });
    expect(transport.getState(chatId).sessionId).not.toBe(before);
    expect(own.inspect(chatId)?.in.nextSeq).toBe(1); // the message went to the new session once

    // A reload with the record saved now works too (no NOT_FOUND left behind).
    await transport.getClient(chatId).flushPersistence();
    transport.close();
    const reloaded = new SessionChatTransport({
      baseURL: own.url,
      taskIdentifier: 'echo',
      startSession: startSessionVia(own),
      persistence: memoryPersistence(records),
      environment: { warn: () => {} },
    });
    const again = new TestChat({ id: chatId, transport: reloaded, messages: chat.messages });
    await again.resumeStream();
    await again.sendMessage({ text: 'and after a reload' });
    expect(again.error).toBeUndefined();
    expect(transcript(again.messages).slice(-2)).toEqual([
      'user: and after a reload',
      'assistant: Echo: and after a reload',
    ]);
    reloaded.close();
    await own.close();
  });

  it('a page reloaded after the restart: resume finds nothing live, then the send works', async () => {
    const own = await startEchoServer();
    const records = new Map<string, PersistedChatRecord>();
    const make = () =>
      new SessionChatTransport({
        baseURL: own.url,
        taskIdentifier: 'echo',
        startSession: startSessionVia(own),
        persistence: memoryPersistence(records),
        environment: { warn: () => {} },
      });
    const chatId = uniqueChatId('forgotten-on-reload');
    const first = make();
    const chat = new TestChat({ id: chatId, transport: first });
    await chat.sendMessage({ text: 'saved before the restart' });
    await first.getClient(chatId).flushPersistence();
    first.close();
    await own.restart({ keepState: false });
    const second = make();
    const resumed = new TestChat({ id: chatId, transport: second, messages: chat.messages });
    await resumed.resumeStream();
    expect(resumed.error).toBeUndefined();
    await resumed.sendMessage({ text: 'hello again' });
    expect(resumed.error).toBeUndefined();
    expect(transcript(resumed.messages).slice(-2)).toEqual([
      'user: hello again',
      'assistant: Echo: hello again',
    ]);
    second.close();
    await own.close();
  });
});

describe('beyond the list: a send right after a resume that found nothing live', () => {
  it('is not taken for the settled peek’s turn (which still drains .out for about a second)', async () => {
    const records = new Map<string, PersistedChatRecord>();
    const chatId = uniqueChatId('send-after-settled-resume');
    const first = transportFor('echo', { persistence: memoryPersistence(records) }).transport;
    const chat = new TestChat({ id: chatId, transport: first });
    await chat.sendMessage({ text: 'before the reload' });
    await first.getClient(chatId).flushPersistence();
    first.close();
    const second = transportFor('echo', { persistence: memoryPersistence(records) }).transport;
    const reloaded = new TestChat({ id: chatId, transport: second, messages: chat.messages });
    await reloaded.resumeStream(); // nothing live: resolves at once, the peek drains on
    await reloaded.sendMessage({ text: 'right after the reload' });
    expect(reloaded.error).toBeUndefined();
    expect(transcript(reloaded.messages).slice(-2)).toEqual([
      'user: right after the reload',
      'assistant: Echo: right after the reload',
    ]);
    second.close();
  });
});

describe('item 5: stopping a send that waits out a 429', () => {
  it('the next message shows its own reply (the refused attempt never made a turn)', async () => {
    const own = await startEchoServer();
    const chatId = uniqueChatId('stop-during-429');
    let appendsOut = 0;
    const counting: typeof fetch = async (input, init) => {
      const url = urlOf(input);
      if (url.pathname.endsWith('/in/append')) appendsOut++;
      return fetch(input, init);
    };
    const { transport } = transportFor('echo', { fetch: counting }, own);
    await transport.preload(chatId);
    own.faults.failAppends(1, 429, { resetInMs: 30_000 });
    const chat = new TestChat({ id: chatId, transport });
    const waiting = chat.sendMessage({ text: 'held by a rate limit' });
    await waitFor(() => appendsOut === 1, 5_000, 'the refused attempt');
    await new Promise((resolve) => setTimeout(resolve, 100));
    await chat.stop();
    await waiting;
    own.faults.reset();
    await new Promise((resolve) => setTimeout(resolve, 200)); // the stop is stored
    await chat.sendMessage({ text: 'next' });
    expect(chat.error).toBeUndefined();
    expect(transcript(chat.messages).slice(-2)).toEqual(['user: next', 'assistant: Echo: next']);
    transport.close();
    await own.close();
  });
});

describe('item 6: a late first batch never shows another device’s reply as ours', () => {
  it('a reloaded page whose first .out batch comes 600 ms after its headers (the edge is guessed at 250 ms)', async () => {
    const chatId = uniqueChatId('late-first-batch');
    const records = new Map<string, PersistedChatRecord>();
    // This device had the chat's first turn, then the page reloads.
    const before = transportFor('echo', { persistence: memoryPersistence(records) }).transport;
    const chat = new TestChat({ id: chatId, transport: before });
    await chat.sendMessage({ text: 'mine first' });
    await before.getClient(chatId).flushPersistence();
    before.close();
    // Another device's turn is on .out meanwhile, its reply still streaming slowly.
    const other = transportFor('echo').transport;
    const otherChat = new TestChat({ id: chatId, transport: other });
    const othersTurn = otherChat.sendMessage(
      { text: 'the other device asks, slowly' },
      { metadata: { delayMs: 80 } },
    );
    await waitFor(() => otherChat.status === 'streaming', 5_000, 'the other device’s reply');
    // The reloaded page's first .out response sends its first batch 600 ms after its headers.
    let delayed = false;
    const lateFirstBatch: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      const url = urlOf(input);
      if (delayed || !url.pathname.endsWith('/out') || response.body === null) return response;
      delayed = true;
      const source = response.body;
      const body = new ReadableStream<Uint8Array>({
        async start(controller) {
          await new Promise((resolve) => setTimeout(resolve, 600));
          const reader = source.getReader();
          for (;;) {
            const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
            if (done || value === undefined) break;
            controller.enqueue(value);
          }
          controller.close();
        },
        cancel: () => source.cancel().catch(() => undefined),
      });
      return new Response(body, { status: response.status, headers: response.headers });
    };
    const { transport } = transportFor('echo', {
      fetch: lateFirstBatch,
      persistence: memoryPersistence(records),
    });
    const reloaded = new TestChat({ id: chatId, transport, messages: chat.messages });
    await reloaded.sendMessage({ text: 'mine again' });
    await othersTurn;
    expect(reloaded.error).toBeUndefined();
    expect(transcript(reloaded.messages).slice(-2)).toEqual([
      'user: mine again',
      'assistant: Echo: mine again',
    ]);
    transport.close();
    other.close();
  });
});

describe('the first message of a chat another page opened (its session already made, `.out` empty)', () => {
  it('streams its reply as it comes, not all at once when it ends', async () => {
    let open = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const gatedAgent = defineAgent({
      id: 'gated',
      async *run() {
        yield { type: 'start' } as UIMessageChunk;
        yield { type: 'text-start', id: 't' } as UIMessageChunk;
        yield { type: 'text-delta', id: 't', delta: 'before the gate' } as UIMessageChunk;
        await gate;
        yield { type: 'text-delta', id: 't', delta: ', after it' } as UIMessageChunk;
        yield { type: 'text-end', id: 't' } as UIMessageChunk;
        yield { type: 'finish' } as UIMessageChunk;
      },
    });
    const own = await startEchoServer({ agents: [echoAgent, gatedAgent] });
    const chatId = uniqueChatId('first-send-preexisting');
    // Another tab opened the chat from a link: it made the session, nothing was sent yet.
    const other = transportFor('gated', {}, own).transport;
    await other.getClient(chatId).ensureSession();
    const { transport } = transportFor('gated', {}, own);
    const stream = await transport.sendMessages({
      chatId,
      trigger: 'submit-message',
      messageId: undefined,
      messages: [userMessage('hello')],
      abortSignal: undefined,
    });
    expect(transport.getClient(chatId).sessionPreexisted).toBe(true);
    // The agent waits until the first delta is read here; held, it would come only after the
    // reply ended (the gate then opens after 3 s anyway, so the failure is an assertion).
    let opened = false;
    const fallback = setTimeout(() => {
      opened = true;
      open();
    }, 3_000);
    const reader = stream.getReader();
    const seen: string[] = [];
    let openBeforeFirstDelta: boolean | undefined;
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      if (next.value.type !== 'text-delta') continue;
      seen.push(next.value.delta);
      if (openBeforeFirstDelta === undefined) {
        openBeforeFirstDelta = opened;
        open();
      }
    }
    clearTimeout(fallback);
    expect(openBeforeFirstDelta).toBe(false);
    expect(seen).toEqual(['before the gate', ', after it']);
    expect(own.inspect(chatId)?.in.nextSeq).toBe(1);
    transport.close();
    other.close();
    await own.close();
  });
});

/** An `environment.onUnload` the test fires (`unload()`: the page goes away for good). */
function unloadSource() {
  const listeners = new Set<() => void>();
  return {
    listeners,
    onUnload: (listener: () => void) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    unload: () => {
      for (const listener of [...listeners]) listener();
    },
  };
}

/** A page on `records` whose going away (`leaving.unload()`) the test decides. */
function leavingPage(
  own: DevServer,
  records: Map<string, PersistedChatRecord>,
  overrides: Partial<SessionChatTransportOptions>,
) {
  const leaving = unloadSource();
  const page = transportFor(
    'echo',
    { persistence: memoryPersistence(records), ...overrides, environment: { onUnload: leaving.onUnload } },
    own,
  ).transport;
  return { page, leaving };
}

/**
 * A new chat's first message, sent by a page whose `startSession` never answers, and the page
 * gone before it did (noted at the unload). Returns the messages the app showed.
 */
async function leaveBeforeSession(own: DevServer, records: Map<string, PersistedChatRecord>, chatId: string) {
  let starts = 0;
  const { page, leaving } = leavingPage(own, records, {
    startSession: () => {
      starts += 1;
      return new Promise(() => {});
    },
  });
  const chat = new TestChat({ id: chatId, transport: page });
  void chat.sendMessage({ text: 'the first message' });
  await waitFor(() => starts === 1, 5_000, 'the session’s start');
  expect(page.getState(chatId).sessionId).toBeUndefined();
  leaving.unload(); // the page goes away (a reload)
  expect(page.getState(chatId).pendingAppend).toBeDefined();
  await page.getClient(chatId).flushPersistence();
  page.close();
  expect(records.get(chatId)?.sessionId).toBeUndefined();
  expect(own.inspect(chatId)).toBeUndefined(); // nothing reached the server
  return chat.messages;
}

/** A page loaded on `records` resumes the chat: the first message is answered, stored once. */
async function expectFirstMessageAnswered(
  own: DevServer,
  records: Map<string, PersistedChatRecord>,
  chatId: string,
  shown: TestChat['messages'],
) {
  const reloaded = transportFor('echo', { persistence: memoryPersistence(records) }, own).transport;
  const resumed = new TestChat({ id: chatId, transport: reloaded, messages: shown });
  await resumed.resumeStream();
  expect(resumed.error).toBeUndefined();
  expect(transcript(resumed.messages)).toEqual([
    'user: the first message',
    'assistant: Echo: the first message',
  ]);
  expect(own.inspect(chatId)?.in.nextSeq).toBe(1);
  expect(reloaded.getState(chatId).turnLive).toBe(false);
  reloaded.close();
}

describe('a message whose append was unanswered when the page went away', () => {
  async function leaveWithAppendInFlight(
    own: DevServer,
    records: Map<string, PersistedChatRecord>,
    chatId: string,
    store: boolean,
  ) {
    const first = transportFor('echo', { persistence: memoryPersistence(records) }, own).transport;
    const chat = new TestChat({ id: chatId, transport: first });
    await chat.sendMessage({ text: 'an earlier turn' });
    own.faults.hangAppends(1, { store });
    void chat.sendMessage({ text: 'sent just before the reload' });
    await waitFor(() => first.getState(chatId).pendingAppend !== undefined, 5_000, 'the append in flight');
    // The server took it (and the hang with it) before the page goes away: else the closing page
    // aborts it unsent, and the resend after the reload meets the hang instead.
    if (store) await waitFor(() => own.inspect(chatId)?.in.nextSeq === 2, 5_000, 'the append to be stored');
    await first.getClient(chatId).flushPersistence();
    first.close(); // the page goes away; its append is never answered
    return chat.messages.slice(0, 3);
  }

  it('an unplanned moment: the token expired meanwhile; the resend refreshes it and is stored once', async () => {
    const own = await startEchoServer();
    const records = new Map<string, PersistedChatRecord>();
    const chatId = uniqueChatId('resend-expired-token');
    const saved = await leaveWithAppendInFlight(own, records, chatId, true);
    own.faults.expireTokens();
    const { transport } = transportFor('echo', { persistence: memoryPersistence(records) }, own);
    const resumed = new TestChat({ id: chatId, transport, messages: saved });
    await resumed.resumeStream();
    expect(resumed.error).toBeUndefined();
    expect(transcript(resumed.messages).slice(-1)).toEqual(['assistant: Echo: sent just before the reload']);
    expect(own.inspect(chatId)?.in.nextSeq).toBe(2); // the earlier message and this one, once
    transport.close();
    await own.close();
  });

  it('left before it went out (its read still locating the edge): noted at the unload, sent by the reloaded page, stored once', async () => {
    const own = await startEchoServer();
    const records = new Map<string, PersistedChatRecord>();
    const chatId = uniqueChatId('left-before-append');
    const earlier = transportFor('echo', { persistence: memoryPersistence(records) }, own).transport;
    const before = new TestChat({ id: chatId, transport: earlier });
    await before.sendMessage({ text: 'an earlier turn' });
    await earlier.getClient(chatId).flushPersistence();
    earlier.close();

    // A page loaded on the chat: its send reads to the edge first, and that read never answers.
    const requests: string[] = [];
    const stalledOut: typeof fetch = (input, init) => {
      const path = urlOf(input).pathname;
      requests.push(path);
      if (!path.endsWith('/out')) return fetch(input, init);
      return new Promise<Response>((_, reject) => {
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason), { once: true });
      });
    };
    const { page, leaving } = leavingPage(own, records, { fetch: stalledOut });
    const chat = new TestChat({ id: chatId, transport: page, messages: before.messages });
    void chat.sendMessage({ text: 'sent just before the reload' });
    await waitFor(() => requests.some((path) => path.endsWith('/out')), 5_000, 'the send’s read');
    expect(requests.filter((path) => path.endsWith('/in/append'))).toEqual([]);
    expect(page.getState(chatId).turnLive).toBe(false);
    expect(leaving.listeners.size).toBe(1);
    leaving.unload(); // the page goes away (a reload)
    const left = page.getState(chatId);
    expect(left.turnLive).toBe(true);
    expect(left.pendingAppend).toBeDefined();
    await page.getClient(chatId).flushPersistence();
    page.close();

    const reloaded = transportFor('echo', { persistence: memoryPersistence(records) }, own).transport;
    const resumed = new TestChat({ id: chatId, transport: reloaded, messages: chat.messages });
    await resumed.resumeStream();
    expect(resumed.error).toBeUndefined();
    expect(transcript(resumed.messages)).toEqual([
      'user: an earlier turn',
      'assistant: Echo: an earlier turn',
      'user: sent just before the reload',
      'assistant: Echo: sent just before the reload',
    ]);
    expect(own.inspect(chatId)?.in.nextSeq).toBe(2); // the earlier message and this one, once
    reloaded.close();
    await own.close();
  });

  it('a new chat’s first message, left before its session existed: the reloaded page starts the session and sends it, once', async () => {
    const own = await startEchoServer();
    const records = new Map<string, PersistedChatRecord>();
    const chatId = uniqueChatId('left-before-session');
    const shown = await leaveBeforeSession(own, records, chatId);
    await expectFirstMessageAnswered(own, records, chatId, shown);
    await own.close();
  });

  it('the chat route failing for a moment at the session’s start: the first send is answered, the start retried', async () => {
    let starts = 0;
    const flaky: SessionChatTransportOptions['startSession'] = (...args) => {
      starts += 1;
      if (starts === 1) return Promise.reject(new TypeError('Failed to fetch'));
      return startSessionVia(server)(...args);
    };
    const { transport } = transportFor('echo', { startSession: flaky });
    const chat = new TestChat({ id: uniqueChatId('start-retried'), transport });
    await chat.sendMessage({ text: 'hello' });
    expect(chat.error).toBeUndefined();
    expect(transcript(chat.messages)).toEqual(['user: hello', 'assistant: Echo: hello']);
    expect(starts).toBe(2);
    transport.close();
  });

  it('the chat route refusing the start (401) is not retried', async () => {
    let starts = 0;
    const refusing: SessionChatTransportOptions['startSession'] = () => {
      starts += 1;
      return Promise.reject(new AuthError({ status: 401, operation: 'chat route start' }));
    };
    const { transport } = transportFor('echo', { startSession: refusing });
    const chat = new TestChat({ id: uniqueChatId('start-refused'), transport });
    await chat.sendMessage({ text: 'hello' });
    expect(chat.error).toBeInstanceOf(AuthError);
    expect(starts).toBe(1);
    transport.close();
  });

  it('left before its session existed, the reloaded page’s start refused (401): reported, the message kept for the next page, then sent once', async () => {
    const own = await startEchoServer();
    const records = new Map<string, PersistedChatRecord>();
    const chatId = uniqueChatId('left-before-session-refused');
    const shown = await leaveBeforeSession(own, records, chatId);
    // Signed out meanwhile: the app's route refuses the start.
    const refusing = transportFor(
      'echo',
      {
        persistence: memoryPersistence(records),
        startSession: () => Promise.reject(new AuthError({ status: 401, operation: 'chat route start' })),
      },
      own,
    ).transport;
    await expect(refusing.reconnectToStream({ chatId })).rejects.toBeInstanceOf(AuthError);
    expect(own.inspect(chatId)).toBeUndefined();
    await refusing.getClient(chatId).flushPersistence();
    refusing.close();
    expect(records.get(chatId)?.pendingAppend).toBeDefined(); // not lost
    await expectFirstMessageAnswered(own, records, chatId, shown);
    await own.close();
  });

  it('a page with no session and nothing unsent resumes nothing and starts no session', async () => {
    const records = new Map<string, PersistedChatRecord>();
    let starts = 0;
    const counted: SessionChatTransportOptions['startSession'] = (...args) => {
      starts += 1;
      return startSessionVia(server)(...args);
    };
    const { transport } = transportFor('echo', {
      persistence: memoryPersistence(records),
      startSession: counted,
    });
    expect(await transport.reconnectToStream({ chatId: uniqueChatId('no-session') })).toBeNull();
    expect(starts).toBe(0);
    transport.close();
  });

  it('stopped before it went out, then left: nothing noted, nothing sent after the reload', async () => {
    const own = await startEchoServer();
    const records = new Map<string, PersistedChatRecord>();
    const chatId = uniqueChatId('stopped-before-append');
    const earlier = transportFor('echo', { persistence: memoryPersistence(records) }, own).transport;
    const before = new TestChat({ id: chatId, transport: earlier });
    await before.sendMessage({ text: 'an earlier turn' });
    await earlier.getClient(chatId).flushPersistence();
    earlier.close();

    let outs = 0;
    const stalledOut: typeof fetch = (input, init) => {
      if (!urlOf(input).pathname.endsWith('/out')) return fetch(input, init);
      outs += 1;
      return new Promise<Response>((_, reject) => {
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason), { once: true });
      });
    };
    const { page, leaving } = leavingPage(own, records, { fetch: stalledOut });
    const chat = new TestChat({ id: chatId, transport: page, messages: before.messages });
    const sending = chat.sendMessage({ text: 'stopped at once' });
    await waitFor(() => outs > 0, 5_000, 'the send’s read');
    await chat.stop(); // the user stops before the message went out
    await sending;
    await waitFor(() => leaving.listeners.size === 0, 5_000, 'the send to let go of the unload');
    leaving.unload(); // then the page goes away
    expect(page.getState(chatId).turnLive).toBe(false);
    await page.getClient(chatId).flushPersistence();
    page.close();

    const recorder = recordingFetch();
    const reloaded = transportFor(
      'echo',
      { persistence: memoryPersistence(records), fetch: recorder.fetch },
      own,
    ).transport;
    expect(await reloaded.reconnectToStream({ chatId })).toBeNull();
    expect(recorder.requests.filter((request) => request.path.endsWith('/in/append'))).toEqual([]);
    expect(own.inspect(chatId)?.in.nextSeq).toBe(1); // the earlier message only
    reloaded.close();
    await own.close();
  });

  it('a send whose append went out stops listening for the unload: leaving later notes nothing', async () => {
    const own = await startEchoServer();
    const records = new Map<string, PersistedChatRecord>();
    const chatId = uniqueChatId('unload-listener');
    const leaving = unloadSource();
    const { transport } = transportFor(
      'echo',
      {
        persistence: memoryPersistence(records),
        environment: { onUnload: leaving.onUnload },
      },
      own,
    );
    const chat = new TestChat({ id: chatId, transport });
    await chat.sendMessage({ text: 'answered' });
    expect(leaving.listeners.size).toBe(0);
    leaving.unload();
    expect(transport.getState(chatId).turnLive).toBe(false);
    transport.close();
    await own.close();
  });

  it('another tab’s (its turn followed here, the record shared): not sent again; sent once if this tab takes over', async () => {
    // Issue 19 item 10: a tab reloaded while another tab's append was on its way loaded that
    // append from the shared record, and its resume sent it again (a third append on `.in`).
    const own = await startEchoServer();
    const records = new Map<string, PersistedChatRecord>();
    const chatId = uniqueChatId('resend-other-tab');
    // Never stored: only a resend brings the reply, so a takeover must send it.
    await leaveWithAppendInFlight(own, records, chatId, false);
    const recorder = recordingFetch();
    const appends = () => recorder.requests.filter((request) => request.path.endsWith('/in/append'));
    const { transport } = transportFor(
      'echo',
      { persistence: memoryPersistence(records), fetch: recorder.fetch },
      own,
    );
    await transport.getClient(chatId).ready();
    const pending = transport.getState(chatId).pendingAppend;
    expect(pending).toBeDefined();
    const stream = await transport.reconnectToStream({ chatId, resendPending: false });
    expect(stream).not.toBeNull();
    expect(appends()).toEqual([]);
    // The owner went away with the append unanswered: the tab that takes the turn over sends it.
    if (pending !== undefined) await transport.resendTakenOver(chatId, pending);
    expect(appends()).toHaveLength(1);
    await transport.resendTakenOver(chatId, pending ?? { partId: '', body: '' });
    expect(appends()).toHaveLength(1);
    if (stream !== null) await readAll(stream);
    expect(own.inspect(chatId)?.in.nextSeq).toBe(2); // the earlier message and this one, once
    transport.close();
    await own.close();
  });

  it('refused outright (4xx) when sent again: the resumed stream ends and the chat is not live', async () => {
    const own = await startEchoServer();
    const records = new Map<string, PersistedChatRecord>();
    const chatId = uniqueChatId('resend-refused');
    const first = transportFor('echo', { persistence: memoryPersistence(records) }, own).transport;
    const chat = new TestChat({ id: chatId, transport: first });
    await chat.sendMessage({ text: 'an earlier turn' });
    // What a page saves when it goes away with an append that never reached the server.
    const client = first.getClient(chatId);
    const message = userMessage('never stored');
    markLive(client.store, {
      turnStored: false,
      turnStartCursor: client.getState().lastEventId,
      pendingAppend: { partId: 'never-stored-part', body: serializeAppend(submitChunk({ chatId, message })) },
    });
    await client.flushPersistence();
    first.close();
    const events: SessionEvent[] = [];
    // The service refuses it (400), as it would a body it cannot take.
    const refusing: typeof fetch = async (input, init) =>
      urlOf(input).pathname.endsWith('/in/append')
        ? new Response(JSON.stringify({ ok: false, error: 'refused' }), {
            status: 400,
            headers: { 'content-type': 'application/json' },
          })
        : fetch(input, init);
    const { transport } = transportFor(
      'echo',
      { persistence: memoryPersistence(records), fetch: refusing, onEvent: (event) => events.push(event) },
      own,
    );
    const resumed = new TestChat({ id: chatId, transport, messages: [...chat.messages, message] });
    await resumed.resumeStream();
    await waitFor(() => !transport.getState(chatId).turnLive, 5_000, 'the turn to be over');
    expect(transport.getState(chatId).pendingAppend).toBeUndefined();
    expect(own.inspect(chatId)?.in.nextSeq).toBe(1); // only the earlier message
    expect(transcript(resumed.messages)).toEqual([...transcript(chat.messages), 'user: never stored']);
    expect(events.some((event) => event.type === 'error' && event.error.code === 'BAD_REQUEST')).toBe(true);
    transport.close();
    await own.close();
  });
});
