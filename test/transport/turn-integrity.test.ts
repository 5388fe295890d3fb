import type { UIMessageChunk } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../src/client/events.js';
import { memoryPersistence } from '../../src/client/persistence.js';
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
import { markLive } from './support/live-mark.js';
import { virtualClock } from './support/virtual-clock.js';
import { appendRequests, delayingResponses, hanging, withoutSeq } from './support/wire-filters.js';

/**
 * The defects of issue 11, each against the dev server with the library's DEFAULT options;
 * time passes on an injected clock (`environment`), never through shortened timeouts.
 */
let server: DevServer;
beforeAll(async () => {
  // Pings often (a server option): a clock pushed minutes ahead must not look like a stall.
  server = await startEchoServer({ pingIntervalMs: 20 });
});
afterAll(async () => {
  await server.close();
});

function defaultTransport(overrides: Partial<SessionChatTransportOptions> & { liveness?: boolean } = {}) {
  const events: SessionEvent[] = [];
  const { liveness, ...rest } = overrides;
  const transport = new SessionChatTransport({
    baseURL: server.url,
    taskIdentifier: 'echo',
    startSession: startSessionVia(server, undefined, { liveness: liveness !== false }),
    onEvent: (event) => events.push(event),
    ...rest,
    environment: { warn: () => {}, ...rest.environment },
  });
  return { transport, events };
}

function errorCodes(errors: unknown[]): unknown[] {
  return errors.map((error) => (error as { code?: unknown }).code);
}

describe('defect 1: a turn whose run is gone ends, typed and not resumable', () => {
  it('with a liveness source: RUN_GONE within 10 s of the last record; turnLive cleared; the next send continues', async () => {
    const clock = virtualClock();
    const chatId = uniqueChatId('run-gone');
    const { transport, events } = defaultTransport({ environment: clock.environment });
    const errors: unknown[] = [];
    const chat = new TestChat({ id: chatId, transport, onError: (error) => errors.push(error) });
    server.faults.crashMidTurn({ afterChunks: 4, sessionId: chatId });
    const sending = chat.sendMessage({ text: 'this run is going to crash' });
    await waitFor(() => events.some((event) => event.type === 'first-chunk'), 5_000, 'the first chunk');
    await waitFor(() => server.inspect(chatId)?.row.currentRunId === null, 5_000, 'the crash');
    await new Promise((resolve) => setTimeout(resolve, 100)); // the last records arrive
    const lastRecordAt = clock.now();
    const spent = await clock.advanceUntil(() => chat.status === 'error', 10_000);
    await sending;
    expect(chat.status).toBe('error');
    expect(clock.now() - lastRecordAt).toBeLessThanOrEqual(10_000);
    expect(spent).toBeLessThanOrEqual(10_000);
    expect(errorCodes(errors)).toEqual(['RUN_GONE']);
    expect(errors[0]).not.toBeInstanceOf(TypeError); // the AI SDK must not offer to resume it
    expect(transport.getState(chatId)).toMatchObject({ turnLive: false, closed: false });
    expect(transcript(chat.messages)[1]?.startsWith('assistant: Echo')).toBe(true);

    await chat.sendMessage({ text: 'are you back?' });
    expect(chat.status).toBe('ready');
    expect(transcript(chat.messages).slice(2)).toEqual([
      'user: are you back?',
      'assistant: Echo: are you back?',
    ]);
    transport.close();
  });

  it('without a liveness source: RUN_GONE after the documented silence bound (4 min), not before', async () => {
    const clock = virtualClock();
    const chatId = uniqueChatId('silence');
    const { transport, events } = defaultTransport({ environment: clock.environment, liveness: false });
    const errors: unknown[] = [];
    const chat = new TestChat({ id: chatId, transport, onError: (error) => errors.push(error) });
    server.faults.crashMidTurn({ afterChunks: 4, sessionId: chatId });
    const sending = chat.sendMessage({ text: 'this run is going to crash too' });
    await waitFor(() => events.some((event) => event.type === 'first-chunk'), 5_000, 'the first chunk');
    await waitFor(() => server.inspect(chatId)?.row.currentRunId === null, 5_000, 'the crash');
    await new Promise((resolve) => setTimeout(resolve, 100));
    await clock.advance(230_000, { stepMs: 2_000, realMsPerStep: 5 });
    expect(chat.status).toBe('streaming');
    const status = transport.getState(chatId).status;
    expect(status.type).toBe('waiting');
    if (status.type === 'waiting') expect(status.silentForMs).toBeGreaterThan(200_000);
    await clock.advanceUntil(() => chat.status === 'error', 70_000, { stepMs: 2_000, realMsPerStep: 5 });
    await sending;
    expect(errorCodes(errors)).toEqual(['RUN_GONE']);
    expect(errors[0]).toMatchObject({ reason: 'silence' });
    expect(transport.getState(chatId).turnLive).toBe(false);
    transport.close();
  });

  it('a healthy agent silent for 3 minutes (a slow tool) is never cut off while its run lives', async () => {
    const clock = virtualClock();
    const chatId = uniqueChatId('slow-tool');
    const { transport, events } = defaultTransport({ environment: clock.environment });
    const errors: unknown[] = [];
    const chat = new TestChat({ id: chatId, transport, onError: (error) => errors.push(error) });
    // 3 s of real time between deltas: during one pause the clock moves 3 minutes.
    const sending = chat.sendMessage({ text: 'think hard' }, { metadata: { delayMs: 3_000 } });
    await waitFor(() => events.some((event) => event.type === 'first-chunk'), 5_000, 'the first chunk');
    await clock.advance(180_000, { stepMs: 2_000, realMsPerStep: 10 });
    expect(transport.getState(chatId).status).toMatchObject({ type: 'waiting' });
    expect(chat.status).toBe('streaming');
    await sending;
    expect(errors).toEqual([]);
    expect(transcript(chat.messages)).toEqual(['user: think hard', 'assistant: Echo: think hard']);
    expect(transport.getState(chatId).status.type).not.toBe('waiting');
    transport.close();
  }, 20_000);

  it('a session closed on the server mid-turn: SESSION_CLOSED, the chat is closed, turnLive cleared', async () => {
    const clock = virtualClock();
    const chatId = uniqueChatId('closed-mid-turn');
    const { transport, events } = defaultTransport({ environment: clock.environment });
    const errors: unknown[] = [];
    const chat = new TestChat({ id: chatId, transport, onError: (error) => errors.push(error) });
    server.faults.crashMidTurn({ afterChunks: 4, sessionId: chatId });
    const sending = chat.sendMessage({ text: 'closed while I talk' });
    await waitFor(() => events.some((event) => event.type === 'first-chunk'), 5_000, 'the first chunk');
    await waitFor(() => server.inspect(chatId)?.row.currentRunId === null, 5_000, 'the crash');
    const sessionId = transport.getState(chatId).sessionId;
    await fetch(`${server.url}/api/v1/sessions/${sessionId}/close`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.secretKey}` },
    });
    const spent = await clock.advanceUntil(() => chat.status === 'error', 10_000);
    await sending;
    expect(spent).toBeLessThanOrEqual(10_000);
    expect(errorCodes(errors)).toEqual(['SESSION_CLOSED']);
    expect(transport.getState(chatId)).toMatchObject({
      closed: true,
      turnLive: false,
      status: { type: 'closed' },
    });
    transport.close();
  });
});

describe('defects 2 and 3: attribution without seq / session-in-event-id', () => {
  it('a second device sending into an existing chat shows its own reply, not the previous one', async () => {
    const chatId = uniqueChatId('second-device');
    const first = defaultTransport({ fetch: withoutSeq() });
    const firstChat = new TestChat({ id: chatId, transport: first.transport });
    await firstChat.sendMessage({ text: 'from the phone' });
    first.transport.close();
    const second = defaultTransport({ fetch: withoutSeq() });
    const errors: unknown[] = [];
    const secondChat = new TestChat({
      id: chatId,
      transport: second.transport,
      onError: (error) => errors.push(error),
    });
    await secondChat.sendMessage({ text: 'from the laptop' });
    expect(errors).toEqual([]);
    expect(transcript(secondChat.messages)).toEqual([
      'user: from the laptop',
      'assistant: Echo: from the laptop',
    ]);
    second.transport.close();
  });

  it('a stale cursor (cleared storage half-way) still attributes the reply to its own send', async () => {
    const chatId = uniqueChatId('stale');
    const { transport } = defaultTransport({ fetch: withoutSeq() });
    const chat = new TestChat({ id: chatId, transport });
    await chat.sendMessage({ text: 'one' });
    await chat.sendMessage({ text: 'two' });
    transport.getClient(chatId).store.setState({ lastEventId: 2 });
    await chat.sendMessage({ text: 'three' });
    expect(transcript(chat.messages).slice(-2)).toEqual(['user: three', 'assistant: Echo: three']);
    transport.close();
  });

  it('an action fired just before a send: the send shows its own reply, not the action output', async () => {
    const chatId = uniqueChatId('action-then-send');
    const { transport } = defaultTransport({ fetch: withoutSeq() });
    const chat = new TestChat({ id: chatId, transport });
    await chat.sendMessage({ text: 'hi' });
    await transport.sendAction(chatId, { type: 'shout' });
    await chat.sendMessage({ text: 'after the action' });
    expect(transcript(chat.messages).slice(-2)).toEqual([
      'user: after the action',
      'assistant: Echo: after the action',
    ]);
    transport.close();
  });

  it('after a crashed turn, the next reply is shown (not dropped)', async () => {
    const clock = virtualClock();
    const chatId = uniqueChatId('after-crash');
    const { transport, events } = defaultTransport({ fetch: withoutSeq(), environment: clock.environment });
    const errors: unknown[] = [];
    const chat = new TestChat({ id: chatId, transport, onError: (error) => errors.push(error) });
    server.faults.crashMidTurn({ afterChunks: 4, sessionId: chatId });
    const sending = chat.sendMessage({ text: 'crash here please' });
    await waitFor(() => events.some((event) => event.type === 'first-chunk'), 5_000, 'the first chunk');
    await clock.advanceUntil(() => chat.status === 'error', 10_000);
    await sending;
    await chat.sendMessage({ text: 'and now?' });
    expect(chat.status).toBe('ready');
    expect(transcript(chat.messages).slice(2)).toEqual(['user: and now?', 'assistant: Echo: and now?']);
    transport.close();
  });

  it('after a turn this page never saw finish, the next reply streams (first chunk long before its end)', async () => {
    const chatId = uniqueChatId('unseen-end');
    const persistence = memoryPersistence();
    const { transport: before } = defaultTransport({ persistence });
    const chat = new TestChat({ id: chatId, transport: before });
    await chat.sendMessage({ text: 'an earlier turn' });
    // The page went away after its cursor moved past the turn-complete but before it
    // recorded the turn as over: the record still says a turn is live.
    markLive(before.getClient(chatId).store, { turnStartCursor: undefined });
    await before.getClient(chatId).flushPersistence();
    before.close();
    const timeline: [string, number][] = [];
    const { transport } = defaultTransport({
      persistence,
      onEvent: (event) => timeline.push([event.type, Date.now()]),
    });
    await transport.getClient(chatId).ready();
    expect(transport.getState(chatId).turnLive).toBe(true);
    const stream = await transport.sendMessages({
      trigger: 'submit-message',
      chatId,
      messageId: undefined,
      messages: [userMessage('the next one, slowly')],
      abortSignal: undefined,
      metadata: { delayMs: 150 },
    });
    const chunks = (await readAll(stream)) as UIMessageChunk[];
    const text = chunks.flatMap((chunk) => (chunk.type === 'text-delta' ? [chunk.delta] : [])).join('');
    expect(text).toBe('Echo: the next one, slowly');
    const at = (type: string) => timeline.find(([name]) => name === type)?.[1] ?? Number.NaN;
    expect(at('turn-completed') - at('first-chunk')).toBeGreaterThan(300);
    transport.close();
  });

  it('the same flows without seq: a fresh page after an unseen end streams its own reply', async () => {
    const chatId = uniqueChatId('unseen-end-noseq');
    const persistence = memoryPersistence();
    const { transport: before } = defaultTransport({ persistence, fetch: withoutSeq() });
    const chat = new TestChat({ id: chatId, transport: before });
    await chat.sendMessage({ text: 'an earlier turn' });
    markLive(before.getClient(chatId).store, { turnStartCursor: undefined });
    await before.getClient(chatId).flushPersistence();
    before.close();
    const { transport } = defaultTransport({ persistence, fetch: withoutSeq() });
    const next = new TestChat({ id: chatId, transport });
    await next.sendMessage({ text: 'the next one' });
    expect(transcript(next.messages)).toEqual(['user: the next one', 'assistant: Echo: the next one']);
    transport.close();
  });
});

describe('defect 4: a TurnStream that ends always stops its reader', () => {
  it('turn-complete read while the append response is still pending: no .out connection 1 s later', async () => {
    const recorder = recordingFetch();
    const chatId = uniqueChatId('slow-append');
    const { transport } = defaultTransport({
      fetch: delayingResponses({ match: appendRequests }, 400, recorder.fetch),
    });
    const chat = new TestChat({ id: chatId, transport });
    await chat.sendMessage({ text: 'fast reply, slow receipt' });
    expect(transcript(chat.messages)[1]).toBe('assistant: Echo: fast reply, slow receipt');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(recorder.open()).toBe(0);
    expect(transport.getState(chatId)).toMatchObject({ turnLive: false, lastError: undefined });
    transport.close();
  });
});

describe('defect 5: sending while a reply streams', () => {
  it('the earlier reply is read to its own end; both replies are whole', async () => {
    const chatId = uniqueChatId('overlap');
    const { transport, events } = defaultTransport();
    const errors: unknown[] = [];
    const chat = new TestChat({ id: chatId, transport, onError: (error) => errors.push(error) });
    const first = chat.sendMessage({ text: 'a long first answer here' }, { metadata: { delayMs: 40 } });
    await waitFor(() => events.some((event) => event.type === 'first-chunk'), 5_000, 'the first chunk');
    const second = chat.sendMessage({ text: 'second' });
    await Promise.all([first, second]);
    await waitFor(
      () => events.filter((event) => event.type === 'turn-completed').length === 2,
      5_000,
      'both turns',
    );
    expect(errors).toEqual([]);
    expect(transcript(chat.messages)).toEqual([
      'user: a long first answer here',
      'assistant: Echo: a long first answer here',
      'user: second',
      'assistant: Echo: second',
    ]);
    transport.close();
  });
});

describe('defect 6: stop is honoured while a send is retried', () => {
  it('stop during 429 retries settles at once; the turn is not left live', async () => {
    const clock = virtualClock();
    const chatId = uniqueChatId('stop-429');
    const { transport } = defaultTransport({ environment: clock.environment });
    await transport.preload(chatId);
    server.faults.failAppends(3, 429, { resetInMs: 30_000 });
    const controller = new AbortController();
    const sending = transport.sendMessages({
      trigger: 'submit-message',
      chatId,
      messageId: undefined,
      messages: [userMessage('held by a rate limit')],
      abortSignal: controller.signal,
    });
    // The first attempt was refused; the send now waits ~30 s for the rate-limit reset.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(server.inspect(chatId)?.in.nextSeq).toBe(0);
    const stream = await sending; // returned at once: a slow append never holds back the reply
    const stoppedAt = Date.now();
    controller.abort();
    expect(await readAll(stream)).toEqual([]);
    expect(Date.now() - stoppedAt).toBeLessThan(1_000);
    server.faults.reset();
    await waitFor(() => transport.getClient(chatId).getState().turnLive === false, 2_000, 'turnLive false');
    transport.close();
  });

  it('stop while an attempt that was stored is unanswered: the send settles and a stop follows it', async () => {
    const clock = virtualClock();
    const chatId = uniqueChatId('stop-stored');
    // A server of its own: the append fault must meet this send's append and nothing else.
    const own = await startEchoServer({ pingIntervalMs: 20 });
    const transportOwn = new SessionChatTransport({
      baseURL: own.url,
      taskIdentifier: 'echo',
      startSession: startSessionVia(own),
      environment: { ...clock.environment, warn: () => {} },
    });
    await transportOwn.preload(chatId);
    own.faults.hangAppends(1, { store: true });
    const controller = new AbortController();
    const stream = await transportOwn.sendMessages({
      trigger: 'submit-message',
      chatId,
      messageId: undefined,
      messages: [userMessage('stored but never answered, please stop')],
      abortSignal: controller.signal,
      metadata: { delayMs: 200 },
    });
    await waitFor(() => own.inspect(chatId)?.in.nextSeq === 1, 2_000, 'the stored message');
    controller.abort();
    await readAll(stream);
    await waitFor(() => own.inspect(chatId)?.in.nextSeq === 2, 2_000, 'the stop after it');
    await waitFor(() => transportOwn.getState(chatId).turnLive === false, 2_000, 'turnLive false');
    transportOwn.close();
    await own.close();
  });

  it('transport.stop(chatId) clears turnLive once the stop is stored: a remount does not resume', async () => {
    const chatId = uniqueChatId('stop-clears');
    const persistence = memoryPersistence();
    const { transport } = defaultTransport({ persistence });
    const stream = await transport.sendMessages({
      trigger: 'submit-message',
      chatId,
      messageId: undefined,
      messages: [userMessage('stop me soon please')],
      abortSignal: undefined,
      metadata: { delayMs: 100 },
    });
    await stream.getReader().read();
    await transport.stop(chatId);
    expect(transport.getState(chatId).turnLive).toBe(false);
    await transport.getClient(chatId).flushPersistence();
    transport.close();
    await new Promise((resolve) => setTimeout(resolve, 200)); // the agent writes the stopped turn's end
    const { transport: remounted } = defaultTransport({ persistence });
    expect(await remounted.reconnectToStream({ chatId })).toBeNull();
    remounted.close();
  });
});

describe('defect 7: per-attempt timeouts with defaults', () => {
  it('a half-open append (no response headers) is retried after appendTimeoutMs under the same part id', async () => {
    const clock = virtualClock();
    const chatId = uniqueChatId('half-open');
    const fetcher = hanging({ match: appendRequests });
    const { transport } = defaultTransport({ fetch: fetcher, environment: clock.environment });
    const chat = new TestChat({ id: chatId, transport });
    const sending = chat.sendMessage({ text: 'over a flaky network' });
    await waitFor(() => fetcher.hung() === 1, 5_000, 'the hanging attempt');
    expect(chat.status).toBe('submitted');
    await clock.advance(20_500);
    await sending;
    expect(chat.status).toBe('ready');
    expect(transcript(chat.messages)[1]).toBe('assistant: Echo: over a flaky network');
    transport.close();
  });

  it('a .out connect that never answers is retried after connectTimeoutMs', async () => {
    const clock = virtualClock();
    const chatId = uniqueChatId('connect-hang');
    const fetcher = hanging({ match: (url) => url.pathname.endsWith('/out') });
    const { transport } = defaultTransport({ fetch: fetcher, environment: clock.environment });
    const chat = new TestChat({ id: chatId, transport });
    const sending = chat.sendMessage({ text: 'connect again' });
    await waitFor(() => fetcher.hung() === 1, 5_000, 'the hanging connect');
    await clock.advance(20_500);
    await sending;
    expect(transcript(chat.messages)[1]).toBe('assistant: Echo: connect again');
    transport.close();
  });

  it("the app's startSession never settling fails the send with TOKEN_UNAVAILABLE after callbackTimeoutMs", async () => {
    const clock = virtualClock();
    const chatId = uniqueChatId('callback-hang');
    const { transport } = defaultTransport({
      environment: clock.environment,
      startSession: () => new Promise(() => {}),
    });
    const errors: unknown[] = [];
    const chat = new TestChat({ id: chatId, transport, onError: (error) => errors.push(error) });
    const sending = chat.sendMessage({ text: 'anyone there?' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(chat.status).toBe('submitted');
    await clock.advance(30_500);
    await sending;
    expect(errorCodes(errors)).toEqual(['TOKEN_UNAVAILABLE']);
    transport.close();
  });
});
