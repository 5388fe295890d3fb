import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryPersistence } from '../../src/client/persistence.js';
import type { DevServer } from '../../src/dev-server/index.js';
import {
  createTransport,
  TestChat,
  transcript,
  uniqueChatId,
  waitFor,
} from './support/dev-server-fixture.js';
import {
  echoReply,
  MATRIX_TEXT,
  MID_REPLY_CHUNK,
  Page,
  pauseTurn,
  startMomentsServer,
} from './support/moments.js';
import { type VirtualClock, virtualClock } from './support/virtual-clock.js';

/**
 * Another tab stops the turn while this page's own message is still unanswered
 * (`noteRemoteStop`): this page appends a stop behind its message too, since appends of two tabs
 * are not ordered. That append failing is reported, not thrown, and loses nothing; retried, it is
 * stored once; refused because the session closed, the close is reported once (by the turn it
 * ends). Default options (retry policy included; its backoff on an injected clock).
 */
let server: DevServer;
beforeAll(async () => {
  server = await startMomentsServer();
});
afterAll(async () => {
  await server.close();
});

/**
 * A send whose append is stored and its answer held on the way back (`page.release()` lets it
 * in), its turn paused before the first chunk.
 */
async function unansweredSend(
  name: string,
  options: { clock?: VirtualClock; beforeChunk?: number; network?: typeof fetch } = {},
) {
  const { clock, beforeChunk = 0, network = fetch } = options;
  const chatId = uniqueChatId(name);
  const pause = pauseTurn(chatId, MATRIX_TEXT, beforeChunk);
  const page = new Page((input, init) => network(input, init));
  const { transport, events } = createTransport(server, {
    persistence: memoryPersistence(),
    retry: undefined,
    fetch: page.fetch,
    environment: { warn: () => {}, ...clock?.environment },
  });
  const errors: unknown[] = [];
  const chat = new TestChat({ id: chatId, transport, onError: (error) => errors.push(error) });
  page.holdAppendResponse(MATRIX_TEXT);
  const sending = chat.sendMessage({ text: MATRIX_TEXT });
  await waitFor(() => pause.reached && page.holding === 1, 5_000, 'the stored, unanswered append');
  return { chatId, pause, page, transport, events, errors, chat, sending };
}

describe('noteRemoteStop: this page’s own stop behind its unanswered message', () => {
  it('refused (400): reported as a non-fatal error event; the turn goes on and ends whole', async () => {
    const { chatId, pause, page, transport, events, chat, sending } =
      await unansweredSend('remote-stop-refused');
    server.faults.failAppends(1, 400);
    transport.noteRemoteStop(chatId);
    page.release();
    await waitFor(() => events.some((event) => event.type === 'error'), 5_000, 'the refused stop reported');
    const reported = events.filter((event) => event.type === 'error');
    expect(reported).toHaveLength(1);
    expect(reported[0]).toMatchObject({ type: 'error', chatId, fatal: false });
    expect(reported[0]?.type === 'error' && typeof reported[0].error.code).toBe('string');
    expect(server.inspect(chatId)?.in.nextSeq).toBe(1); // the message only
    // The other tab's stop did not come either (it may have failed too): the reply runs in full.
    server.faults.reset();
    pause.release();
    await sending;
    await waitFor(() => chat.status === 'ready', 5_000, 'the turn to end');
    expect(chat.error).toBeUndefined();
    expect(transcript(chat.messages)).toEqual([`user: ${MATRIX_TEXT}`, echoReply(MATRIX_TEXT)]);
    transport.close();
  });

  it('rate-limited once (429): retried under its part id, stored once; the turn ends quietly as stopped', async () => {
    const { chatId, page, transport, events, chat, sending } = await unansweredSend('remote-stop-429');
    server.faults.failAppends(1, 429, { resetInMs: 100 });
    transport.noteRemoteStop(chatId);
    page.release();
    await sending;
    await waitFor(
      () => chat.status === 'ready' || chat.status === 'error',
      10_000,
      'the stopped turn to end',
    );
    expect(chat.error).toBeUndefined();
    expect(events.filter((event) => event.type === 'error')).toEqual([]);
    expect(server.inspect(chatId)?.in.nextSeq).toBe(2); // the message, then one stop
    expect(transcript(chat.messages)).toEqual([`user: ${MATRIX_TEXT}`]);
    transport.close();
  });

  it('failing with 5xx until the default retry policy gives up: one non-fatal error event; the turn goes on and ends whole', async () => {
    // The default backoff (6 attempts, about 2-4 s in all) runs on a clock the test pushes.
    const clock = virtualClock();
    const { chatId, pause, page, transport, events, errors, chat, sending } = await unansweredSend(
      'remote-stop-5xx',
      { clock },
    );
    const appendsBefore = page.appendsSent;
    server.faults.failAppends(10, 503); // more than the 6 attempts of the default policy
    transport.noteRemoteStop(chatId);
    page.release();
    await clock.advanceUntil(() => events.some((event) => event.type === 'error'), 30_000, {
      stepMs: 250,
      realMsPerStep: 5,
    });
    const reported = events.filter((event) => event.type === 'error');
    expect(reported).toHaveLength(1);
    expect(reported[0]).toMatchObject({ type: 'error', chatId, fatal: false });
    expect(reported[0]?.type === 'error' && reported[0].error).toMatchObject({
      code: 'SERVER_ERROR',
      status: 503,
    });
    expect(page.appendsSent - appendsBefore).toBe(6); // every attempt of the default policy
    expect(server.inspect(chatId)?.in.nextSeq).toBe(1); // the message only: nothing of the stop
    server.faults.reset();
    pause.release();
    await sending;
    await waitFor(() => chat.status === 'ready', 5_000, 'the turn to end');
    expect(chat.error).toBeUndefined();
    expect(errors).toEqual([]);
    expect(events.filter((event) => event.type === 'error')).toHaveLength(1); // no TURN_REJECTED after it
    expect(transcript(chat.messages)).toEqual([`user: ${MATRIX_TEXT}`, echoReply(MATRIX_TEXT)]);
    expect(server.inspect(chatId)?.in.nextSeq).toBe(1);
    transport.close();
  });

  it('the session closed (409): SESSION_CLOSED reported once, never thrown; the chat ends closed with what the server has', async () => {
    const { chatId, page, transport, events, errors, chat, sending } = await unansweredSend(
      'remote-stop-closed',
      { beforeChunk: MID_REPLY_CHUNK },
    );
    // What the agent wrote before the pause (start, start-step, text-start, three 8-character deltas).
    const partialReply = echoReply(MATRIX_TEXT).slice(0, 'assistant: '.length + 3 * 8);
    await waitFor(() => transcript(chat.messages)[1] === partialReply, 5_000, 'the reply so far');
    const sessionId = transport.getState(chatId).sessionId ?? '';
    const closed = await fetch(`${server.url}/api/v1/sessions/${sessionId}/close`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.secretKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'closed by the app' }),
    });
    expect(closed.ok).toBe(true);
    const appendsBefore = page.appendsSent;
    expect(() => transport.noteRemoteStop(chatId)).not.toThrow();
    page.release();
    await sending; // the AI SDK's sendMessage resolves: the failure is the chat's error, not thrown
    await waitFor(
      () => chat.status === 'ready' || chat.status === 'error',
      5_000,
      () => `the chat to settle (status ${chat.status})`,
    );
    await new Promise((resolve) => setTimeout(resolve, 50)); // a late second report would land here
    expect(page.appendsSent - appendsBefore).toBe(1); // the stop, refused for good: never retried
    expect(chat.status).toBe('error');
    expect(chat.error).toMatchObject({ code: 'SESSION_CLOSED', closedReason: 'closed by the app' });
    expect(errors.map((error) => (error as { code?: unknown }).code)).toEqual(['SESSION_CLOSED']);
    const reported = events.filter((event) => event.type === 'error');
    expect(reported).toHaveLength(1); // the turn's: it ended with the close
    expect(reported[0]).toMatchObject({ type: 'error', chatId, fatal: true });
    expect(reported[0]?.type === 'error' && reported[0].error.code).toBe('SESSION_CLOSED');
    expect(events.filter((event) => event.type === 'session-closed')).toEqual([
      { type: 'session-closed', chatId, reason: 'closed by the app' },
    ]);
    expect(transport.getState(chatId)).toMatchObject({
      closed: true,
      closedReason: 'closed by the app',
      turnLive: false,
      status: { type: 'closed' },
    });
    // Nothing the server has is lost: the message and the reply as far as the agent wrote it.
    expect(transcript(chat.messages)).toEqual([`user: ${MATRIX_TEXT}`, partialReply]);
    expect(server.inspect(chatId)?.in.nextSeq).toBe(1); // the message; no stop
    expect(await transport.reconnectToStream({ chatId })).toBeNull(); // nothing left to resume
    transport.close();
  });

  it('the session closed (409) after the turn ended whole: the stop reports SESSION_CLOSED itself, once, non-fatal', async () => {
    // The stop waits on the way out until the turn has ended and the session closed.
    let letStopOut = () => {};
    const stopHeld = new Promise<void>((resolve) => {
      letStopOut = resolve;
    });
    let stopsHeld = 0;
    const network: typeof fetch = async (input, init) => {
      if (typeof init?.body === 'string' && init.body.includes('"kind":"stop"')) {
        stopsHeld++;
        await stopHeld;
      }
      return fetch(input, init);
    };
    const { chatId, pause, page, transport, events, errors, chat, sending } = await unansweredSend(
      'remote-stop-closed-after',
      { network },
    );
    transport.noteRemoteStop(chatId);
    page.release(); // appends of a chat go out in order: the stop follows the message's answer
    await waitFor(() => stopsHeld === 1, 5_000, 'the stop on its way');
    pause.release();
    await sending;
    await waitFor(() => chat.status === 'ready', 5_000, 'the turn to end');
    const sessionId = transport.getState(chatId).sessionId ?? '';
    const closed = await fetch(`${server.url}/api/v1/sessions/${sessionId}/close`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.secretKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'closed by the app' }),
    });
    expect(closed.ok).toBe(true);
    letStopOut();
    await waitFor(() => events.some((event) => event.type === 'error'), 5_000, 'the refused stop reported');
    await new Promise((resolve) => setTimeout(resolve, 50)); // a late second report would land here
    const reported = events.filter((event) => event.type === 'error');
    expect(reported).toHaveLength(1);
    expect(reported[0]).toMatchObject({ type: 'error', chatId, fatal: false });
    expect(reported[0]?.type === 'error' && reported[0].error.code).toBe('SESSION_CLOSED');
    expect(events.filter((event) => event.type === 'session-closed')).toHaveLength(1);
    // The turn was over: the chat keeps it whole, with no error of its own.
    expect(chat.status).toBe('ready');
    expect(chat.error).toBeUndefined();
    expect(errors).toEqual([]);
    expect(transcript(chat.messages)).toEqual([`user: ${MATRIX_TEXT}`, echoReply(MATRIX_TEXT)]);
    expect(transport.getState(chatId)).toMatchObject({
      closed: true,
      turnLive: false,
      status: { type: 'closed' },
    });
    expect(server.inspect(chatId)?.in.nextSeq).toBe(1); // the message; no stop
    transport.close();
  });
});
