import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type DevServer, echoAgent, startDevServer } from '../../src/dev-server/index.js';
import { HEADER, RECORD_HEADER } from '../../src/protocol/index.js';
import {
  append,
  openChat,
  readOut,
  replyText,
  sendText,
  type Target,
  turnCompletes,
  untilTurnCompletes,
  userMessage,
} from './support/client.js';

// Faults of single requests (appends, `.out` connections) and the wire without turn correlation.

let server: DevServer;
beforeAll(async () => {
  server = await startDevServer({ agents: [echoAgent], pingIntervalMs: 40, logger: { warn() {} } });
});
afterEach(() => server.faults.reset());
afterAll(() => server.close());

const message = (chatId: string, text: string) => ({
  kind: 'message' as const,
  payload: { chatId, trigger: 'submit-message' as const, message: userMessage(text) },
});

/** Opens `.out` and reads raw SSE text for `forMs`, then aborts; `headers` is null if none came. */
async function rawOut(
  target: Target,
  chatId: string,
  token: string,
  forMs: number,
): Promise<{ headers: Headers | null; text: string }> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), forMs);
  let headers: Headers | null = null;
  let text = '';
  try {
    const response = await fetch(`${target.url}/realtime/v1/sessions/${chatId}/out`, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', 'timeout-seconds': '1' },
      signal: abort.signal,
    });
    headers = response.headers;
    const reader = response.body?.getReader();
    const decoder = new TextDecoder();
    while (reader !== undefined) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } catch (error) {
    if (!abort.signal.aborted) throw error;
  } finally {
    clearTimeout(timer);
  }
  return { headers, text };
}

describe('a wire without turn correlation', () => {
  it('wire option: no seq in append answers, no session-in-event-id on turn-complete, tokens still refreshed', async () => {
    const bare = await startDevServer({
      agents: [echoAgent],
      wire: { appendSeq: false, sessionInEventId: false },
      logger: { warn() {} },
    });
    try {
      const c = await openChat(bare, 'bare-wire');
      const first = await append(bare, c.chatId, c.token, message(c.chatId, 'one'), 'part-1');
      expect(await first.json()).toEqual({ ok: true });
      const repeated = await append(bare, c.chatId, c.token, message(c.chatId, 'one'), 'part-1');
      expect(await repeated.json()).toEqual({ ok: true });
      const read = await readOut(bare, c.chatId, c.token, { until: untilTurnCompletes(1) });
      expect(replyText(read.records)).toBe('Echo: one');
      const complete = read.records.find((record) =>
        record.headers?.some(([name, value]) => name === RECORD_HEADER.control && value === 'turn-complete'),
      );
      expect(complete?.headers?.map(([name]) => name)).toEqual([
        RECORD_HEADER.control,
        RECORD_HEADER.publicAccessToken,
      ]);
      expect(turnCompletes(read.records)[0]?.sessionInEventId).toBeUndefined();
    } finally {
      await bare.close();
    }
  });

  it('faults.omitTurnCorrelation() switches a live server; reset() restores the wire option', async () => {
    const c = await openChat(server, 'omit-correlation');
    server.faults.omitTurnCorrelation();
    expect(await (await sendText(server, c.chatId, c.token, c.chatId, 'bare')).json()).toEqual({ ok: true });
    const read = await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(1) });
    expect(turnCompletes(read.records)[0]?.sessionInEventId).toBeUndefined();
    server.faults.reset();
    expect(await (await sendText(server, c.chatId, c.token, c.chatId, 'full')).json()).toEqual({
      ok: true,
      seq: 1,
    });
    const next = await readOut(server, c.chatId, c.token, {
      lastEventId: String(read.records.at(-1)?.seq_num),
      until: untilTurnCompletes(1),
    });
    expect(turnCompletes(next.records)[0]?.sessionInEventId).toBe(1);
  });
});

describe('429 resets in other units', () => {
  it('writes x-ratelimit-reset as epoch ms, epoch seconds or seconds from now', async () => {
    const c = await openChat(server, 'reset-units');
    server.faults.failAppends(1, 429, { resetInMs: 2_500 });
    server.faults.failAppends(1, 429, { resetInMs: 2_500, resetFormat: 'epoch-seconds' });
    server.faults.failAppends(1, 429, { resetInMs: 2_500, resetFormat: 'delta-seconds' });
    const reset = async () => {
      const before = Date.now();
      const response = await sendText(server, c.chatId, c.token, c.chatId, 'x');
      expect(response.status).toBe(429);
      return { before, after: Date.now(), value: Number(response.headers.get(HEADER.rateLimitReset)) };
    };
    const ms = await reset();
    expect(ms.value).toBeGreaterThanOrEqual(ms.before + 2_500);
    expect(ms.value).toBeLessThanOrEqual(ms.after + 2_500);
    const seconds = await reset();
    expect(seconds.value).toBeGreaterThanOrEqual(Math.ceil((seconds.before + 2_500) / 1000));
    expect(seconds.value).toBeLessThanOrEqual(Math.ceil((seconds.after + 2_500) / 1000));
    expect((await reset()).value).toBe(3);
    expect(server.inspect(c.chatId)?.in.nextSeq).toBe(0);
  });

  it('arms the seconds form over HTTP', async () => {
    const c = await openChat(server, 'reset-admin');
    const armed = await fetch(`${server.url}/__dev/faults`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.secretKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        fault: 'failAppends',
        args: [1, 429, { resetInMs: 4_000, resetFormat: 'delta-seconds' }],
      }),
    });
    expect(armed.status).toBe(200);
    const limited = await sendText(server, c.chatId, c.token, c.chatId, 'x');
    expect(limited.headers.get(HEADER.rateLimitReset)).toBe('4');
  });
});

describe('appends that were stored but not answered well', () => {
  it('failAppendsAfterStoring: a 5xx for a stored append; the retry with the same part id gets the original seq', async () => {
    const c = await openChat(server, 'stored-5xx');
    server.faults.failAppendsAfterStoring(1, 503);
    const failed = await append(server, c.chatId, c.token, message(c.chatId, 'stored anyway'), 'p-1');
    expect(failed.status).toBe(503);
    expect(await failed.json()).toMatchObject({ ok: false });
    const read = await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(1) });
    expect(replyText(read.records)).toBe('Echo: stored anyway');
    const retry = await append(server, c.chatId, c.token, message(c.chatId, 'stored anyway'), 'p-1');
    expect(await retry.json()).toEqual({ ok: true, seq: 0 });
    expect(server.inspect(c.chatId)?.in.nextSeq).toBe(1);
  });

  it('hangAppends: no answer at all, stored only with store: true; the server forgets the request when the client gives up', async () => {
    const c = await openChat(server, 'hang-append');
    const streams = server.app.context.streams;
    const openBefore = streams.size;
    server.faults.hangAppends(1);
    const hung = fetch(`${server.url}/realtime/v1/sessions/${c.chatId}/in/append`, {
      method: 'POST',
      headers: { authorization: `Bearer ${c.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(message(c.chatId, 'lost')),
      signal: AbortSignal.timeout(300),
    });
    await expect(hung).rejects.toThrow();
    expect(server.inspect(c.chatId)?.in.nextSeq).toBe(0);
    server.faults.hangAppends(1, { store: true });
    const stored = fetch(`${server.url}/realtime/v1/sessions/${c.chatId}/in/append`, {
      method: 'POST',
      headers: { authorization: `Bearer ${c.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(message(c.chatId, 'kept')),
      signal: AbortSignal.timeout(300),
    });
    await expect(stored).rejects.toThrow();
    expect(server.inspect(c.chatId)?.in.nextSeq).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(streams.size).toBe(openBefore);
  });
});

describe('.out connections that go quiet', () => {
  it('hangOutConnections: no status and no headers; the next connection is normal', async () => {
    const c = await openChat(server, 'hang-out');
    server.faults.hangOutConnections(1);
    const hung = await rawOut(server, c.chatId, c.token, 300);
    expect(hung.headers).toBeNull();
    const normal = await rawOut(server, c.chatId, c.token, 2_000);
    expect(normal.headers?.get('content-type')).toContain('text/event-stream');
    expect(normal.text).toContain('[DONE]');
  });

  it('failOutConnections: 409 session_closed or a 5xx instead of the stream; the next connection is normal', async () => {
    const c = await openChat(server, 'refuse-out');
    server.faults.failOutConnections(1, 409);
    server.faults.failOutConnections(1, 503);
    const closed = await readOut(server, c.chatId, c.token, { timeoutSeconds: 1 });
    expect(closed.status).toBe(409);
    expect(JSON.parse(closed.raw)).toMatchObject({ code: 'session_closed', closedReason: null });
    expect((await readOut(server, c.chatId, c.token, { timeoutSeconds: 1 })).status).toBe(503);
    const normal = await readOut(server, c.chatId, c.token, { timeoutSeconds: 1 });
    expect(normal).toMatchObject({ status: 200, ended: 'done' });
  });

  it('stallOutAfter: the records up to the stall, then no record, ping or [DONE] with the socket open', async () => {
    const c = await openChat(server, 'stall-out');
    await sendText(server, c.chatId, c.token, c.chatId, 'abcdefghijklmnop');
    await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(1) });
    server.faults.stallOutAfter(2);
    // Timeout-Seconds 1 and pings every 40 ms: a healthy stream would ping and end within 1.5 s.
    const stalled = await rawOut(server, c.chatId, c.token, 1_500);
    expect(stalled.headers?.get('content-type')).toContain('text/event-stream');
    const records = stalled.text
      .split('\n')
      .filter((line) => line.startsWith('data: {"records"'))
      .flatMap((line) => (JSON.parse(line.slice('data: '.length)) as { records: unknown[] }).records);
    expect(records).toHaveLength(2);
    expect(stalled.text).not.toContain('event: ping');
    expect(stalled.text).not.toContain('[DONE]');
  });
});
