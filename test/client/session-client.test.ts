import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWakeSource } from '../../src/client/environment.js';
import type { SessionEvent } from '../../src/client/events.js';
import { memoryPersistence, type PersistedChatRecord } from '../../src/client/persistence.js';
import type { ReadOutItem } from '../../src/client/read-out-iterable.js';
import { SessionClient, type SessionClientOptions } from '../../src/client/session-client.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { stopChunk, userMessageChunk } from '../../src/protocol/input-chunks.js';
import {
  recordingFetch,
  startEchoServer,
  startSessionVia,
  uniqueChatId,
  userMessage,
  waitFor,
} from '../transport/support/dev-server-fixture.js';

let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer({ pingIntervalMs: 200 });
});
afterAll(async () => {
  await server.close();
});

function makeClient(overrides: Partial<SessionClientOptions> = {}) {
  const events: SessionEvent[] = [];
  const chatId = overrides.chatId ?? uniqueChatId('client');
  const client = new SessionClient({
    baseURL: server.url,
    chatId,
    taskIdentifier: 'echo',
    startSession: startSessionVia(server),
    onEvent: (event) => events.push(event),
    retry: { initialDelayMs: 10, maxDelayMs: 50 },
    environment: { warn: () => {} },
    ...overrides,
  });
  return { client, events, chatId };
}

/** A `readOut()` of a chat where nothing arrives, until `controller` aborts it; `failure()` is how it failed. */
function readIdle(client: SessionClient) {
  const controller = new AbortController();
  let failed: unknown;
  const reading = (async () => {
    for await (const _ of client.readOut({ signal: controller.signal })) {
      // nothing arrives: the agent is silent
    }
  })().catch((error: unknown) => {
    failed = error;
  });
  return { controller, reading, failure: () => failed };
}

function say(chatId: string, text: string, metadata?: unknown) {
  return userMessageChunk({ chatId, message: userMessage(text), metadata });
}

/** Reads records until (and including) the first turn-complete. */
async function readTurn(client: SessionClient, from: number | undefined): Promise<ReadOutItem[]> {
  const items: ReadOutItem[] = [];
  for await (const item of client.readOut({ from })) {
    items.push(item);
    if (item.kind === 'control' && item.control === 'turn-complete') break;
  }
  return items;
}

const appends = (requests: { path: string; method: string }[]) =>
  requests.filter((request) => request.method === 'POST' && request.path.endsWith('/in/append'));

describe('SessionClient.append', () => {
  it('returns the .in seq and reuses one X-Part-Id on every retry of a send', async () => {
    const recorder = recordingFetch();
    const { client, chatId, events } = makeClient({ fetch: recorder.fetch });
    await client.preload();
    server.faults.failAppends(2, 500);
    const first = await client.append(say(chatId, 'retry me'));
    expect(first).toMatchObject({ seq: 0, attempts: 3 });
    const second = await client.append(say(chatId, 'next'));
    expect(second.seq).toBe(1);
    const partIds = appends(recorder.requests).map((request) =>
      (request as unknown as { headers: Headers }).headers.get('x-part-id'),
    );
    expect(partIds).toHaveLength(4);
    expect(new Set(partIds.slice(0, 3)).size).toBe(1);
    expect(partIds[3]).not.toBe(partIds[0]);
    expect(events.filter((event) => event.type === 'message-sent')).toHaveLength(2);
    client.close();
  });

  it('gives up after maxAttempts with a typed SERVER_ERROR', async () => {
    const { client, chatId } = makeClient({ retry: { maxAttempts: 2, initialDelayMs: 1 } });
    await client.preload();
    server.faults.failAppends(2, 500);
    await expect(client.append(say(chatId, 'doomed'))).rejects.toMatchObject({
      code: 'SERVER_ERROR',
      status: 500,
    });
    server.faults.reset();
    client.close();
  });

  it('waits for x-ratelimit-reset on 429, and fails when the reset is too far away', async () => {
    const { client, chatId } = makeClient({ retry: { maxRateLimitWaitMs: 500 } });
    await client.preload();
    server.faults.failAppends(1, 429, { resetInMs: 80 });
    const started = Date.now();
    await client.append(say(chatId, 'patient'));
    expect(Date.now() - started).toBeGreaterThanOrEqual(60);
    server.faults.failAppends(1, 429, { resetInMs: 5_000 });
    await expect(client.append(say(chatId, 'impatient'))).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    server.faults.reset();
    client.close();
  });

  it("waits for a 503's Retry-After before retrying, and fails at once when it is too far away", async () => {
    const { client, chatId } = makeClient({ retry: { maxRateLimitWaitMs: 5_000 } });
    await client.preload();
    server.faults.failAppends(1, 503, { retryAfterSeconds: 1 });
    const started = Date.now();
    const result = await client.append(say(chatId, 'after the deploy'));
    expect(result.attempts).toBe(2);
    // Without the header the first retry comes within 25 ms.
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    server.faults.failAppends(1, 503, { retryAfterSeconds: 3_600 });
    const giveUp = Date.now();
    await expect(client.append(say(chatId, 'during maintenance'))).rejects.toMatchObject({
      code: 'SERVER_ERROR',
      status: 503,
    });
    expect(Date.now() - giveUp).toBeLessThan(900);
    server.faults.reset();
    client.close();
  });

  it('survives a lost append response: the retry is stored once', async () => {
    const { client, chatId } = makeClient();
    await client.preload();
    server.faults.loseAppendResponses(1);
    const result = await client.append(say(chatId, 'once only'));
    expect(result.attempts).toBe(2);
    const info = server.inspect(chatId);
    expect(info?.in.nextSeq).toBe(1);
    client.close();
  });

  it('refreshes the token once on 401, then fails with STALE_ACCESS_TOKEN (naming getAccessToken) if refused again', async () => {
    let refreshes = 0;
    const { client, chatId, events } = makeClient({
      getAccessToken: async () => {
        refreshes++;
        return refreshes === 1 ? 'not-a-valid-token' : 'still-not-valid';
      },
    });
    await client.preload();
    server.faults.expireTokens();
    await expect(client.append(say(chatId, 'who am I'))).rejects.toMatchObject({
      code: 'STALE_ACCESS_TOKEN',
      field: 'getAccessToken',
      retryable: false,
      cause: expect.objectContaining({ code: 'UNAUTHORIZED' }),
    });
    expect(refreshes).toBe(1);
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'token-refreshed', source: 'unauthorized' }),
    );
    const error = await client.append(say(chatId, 'again')).catch((caught: Error) => caught);
    expect(String(error)).not.toContain('not-a-valid-token');
    client.close();
  });

  it('409 closes the chat: terminal, later sends refused locally, reads stop', async () => {
    const recorder = recordingFetch();
    const { client, chatId, events } = makeClient({ fetch: recorder.fetch });
    await client.preload();
    const reading = (async () => {
      for await (const _ of client.readOut({})) {
        // keep reading until closed
      }
    })();
    await waitFor(() => client.getState().status.type === 'streaming');
    await fetch(`${server.url}/api/v1/sessions/${client.getState().sessionId}/close`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.secretKey}` },
    });
    await expect(client.append(say(chatId, 'late'))).rejects.toMatchObject({ code: 'SESSION_CLOSED' });
    await expect(reading).rejects.toMatchObject({ code: 'SESSION_CLOSED' });
    expect(client.getState()).toMatchObject({ closed: true, status: { type: 'closed' } });
    expect(events.filter((event) => event.type === 'session-closed')).toHaveLength(1);
    const count = recorder.requests.length;
    await expect(client.append(stopChunk())).rejects.toMatchObject({ code: 'SESSION_CLOSED' });
    expect(recorder.requests.length).toBe(count);
    client.close();
  });

  it('checks the size before anything is sent', async () => {
    const recorder = recordingFetch();
    const { client, chatId } = makeClient({ fetch: recorder.fetch });
    await expect(client.append(say(chatId, '\\'.repeat(700_000)))).rejects.toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
    });
    expect(recorder.requests).toHaveLength(0);
    client.close();
  });

  it('reports a failing startSession and a 409 from it as closed', async () => {
    const { client } = makeClient({
      startSession: async () => {
        throw Object.assign(new Error('closed'), { code: 'SESSION_CLOSED' });
      },
    });
    // The app's own error is typed (TOKEN_UNAVAILABLE) and kept as the cause.
    await expect(client.preload()).rejects.toMatchObject({
      code: 'TOKEN_UNAVAILABLE',
      cause: { message: 'closed' },
    });
    // A plain Error is not a DurableChatError: the chat stays open.
    expect(client.getState().closed).toBe(false);
    client.close();
  });
});

describe('SessionClient.readOut', () => {
  it('yields classified records of a turn; the cursor counts command records too', async () => {
    const { client, chatId } = makeClient();
    await client.append(say(chatId, 'records please'));
    const first = await readTurn(client, undefined);
    expect(first[0]).toMatchObject({ kind: 'data', chunk: { type: 'start' } });
    expect(first.at(-1)).toMatchObject({ kind: 'control', control: 'turn-complete' });
    await client.append(say(chatId, 'and again'));
    const second = await readTurn(client, client.getState().lastEventId);
    await client.append(say(chatId, 'third'));
    const third = await readTurn(client, client.getState().lastEventId);
    // From the second turn on, a trim command follows each turn-complete: yielded and counted.
    expect(third[0]).toMatchObject({ kind: 'command', operation: 'trim' });
    const seqs = [...first, ...second, ...third].map((item) => (item.kind === 'trimmed' ? -1 : item.seqNum));
    expect(seqs).toEqual(seqs.map((_, index) => index));
    expect(client.getState().lastEventId).toBe(seqs.at(-1));
    client.close();
  });

  it('de-duplicates replays by seq_num and reports a trimmed bookmark', async () => {
    const trimServer = await startEchoServer({ trimDelayMs: 0 });
    const { client, chatId, events } = makeClient({
      baseURL: trimServer.url,
      startSession: startSessionVia(trimServer),
    });
    for (const text of ['one', 'two', 'three']) {
      await client.append(say(chatId, text));
      await readTurn(client, client.getState().lastEventId);
    }
    // From the very first record's cursor: turns one and two were trimmed away.
    const items = await readTurn(client, 0);
    expect(items[0]).toMatchObject({ kind: 'trimmed', cursor: 0 });
    expect(events).toContainEqual(expect.objectContaining({ type: 'trimmed-cursor', cursor: 0 }));
    trimServer.faults.duplicateReplay(3);
    const replay = await readTurn(client, (items[1] as { seqNum: number }).seqNum);
    const seqs = replay.map((item) => (item.kind === 'trimmed' ? -1 : item.seqNum));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(seqs[0]).toBe((items[1] as { seqNum: number }).seqNum + 1);
    client.close();
    await trimServer.close();
  });

  it('yields malformed records (and reports them) without losing their neighbours', async () => {
    const { client, chatId, events } = makeClient();
    await client.preload();
    const session = server.app.context.sessions.resolve(chatId);
    session?.out.append([
      (seq, timestamp) => ({ seq_num: seq, timestamp, body: 'not json', headers: [] }),
      (seq, timestamp) => ({ seq_num: seq, timestamp, body: JSON.stringify({ id: 'x' }), headers: [] }),
    ]);
    await client.append(say(chatId, 'after the garbage'));
    const items = await readTurn(client, undefined);
    expect(items.slice(0, 2).map((item) => item.kind)).toEqual(['malformed', 'malformed']);
    expect(items[2]).toMatchObject({ kind: 'data', chunk: { type: 'start' } });
    expect(events.filter((event) => event.type === 'error' && !event.fatal)).toHaveLength(2);
    client.close();
  });

  it('a stall (no byte, not even a ping) reconnects from the cursor', async () => {
    const quiet = await startEchoServer({ pingIntervalMs: 60_000 });
    const { client, chatId, events } = makeClient({
      baseURL: quiet.url,
      startSession: startSessionVia(quiet),
      retry: { stallTimeoutMs: 150, initialDelayMs: 1 },
    });
    await client.append(say(chatId, 'slow but steady', { delayMs: 250 }));
    const items = await readTurn(client, undefined);
    expect(events).toContainEqual(expect.objectContaining({ type: 'stream-reconnecting', reason: 'stall' }));
    const deltas = items.flatMap((item) =>
      item.kind === 'data' && item.chunk.type === 'text-delta' ? [item.chunk.delta] : [],
    );
    expect(deltas.join('')).toBe('Echo: slow but steady');
    client.close();
    await quiet.close();
  });

  it('[DONE] mid-turn resumes from the cursor', async () => {
    const { client, chatId, events } = makeClient({ streamTimeoutSeconds: 1 });
    await client.append(say(chatId, 'a pause of over one second', { delayMs: 1_100 }));
    const items = await readTurn(client, undefined);
    expect(events).toContainEqual(expect.objectContaining({ type: 'stream-reconnecting', reason: 'done' }));
    const deltas = items.flatMap((item) =>
      item.kind === 'data' && item.chunk.type === 'text-delta' ? [item.chunk.delta] : [],
    );
    expect(deltas.join('')).toBe('Echo: a pause of over one second');
  }, 10_000);

  it('gives up with STREAM_DISCONNECTED when reconnects bring nothing new', async () => {
    const { client, events } = makeClient({ retry: { maxReconnectAttempts: 2, initialDelayMs: 1 } });
    await client.preload();
    server.faults.sendOutError('down', { afterRecords: 0, connections: 5 });
    const reading = (async () => {
      for await (const _ of client.readOut({})) {
        // nothing arrives
      }
    })();
    await expect(reading).rejects.toMatchObject({ code: 'STREAM_DISCONNECTED' });
    expect(client.getState().status).toMatchObject({ type: 'error' });
    expect(
      events.filter((event) => event.type === 'stream-reconnecting').map((event) => event.type),
    ).toHaveLength(2);
    server.faults.reset();
    client.close();
  });

  it('an idle readOut on a healthy session survives many clean [DONE]s (they are not failures)', async () => {
    // Default retry options; the server ends each long poll after 1 s (its Timeout-Seconds).
    const { client, events } = makeClient({ streamTimeoutSeconds: 1, retry: undefined });
    await client.preload();
    const { controller, reading, failure } = readIdle(client);
    await waitFor(
      () =>
        events.filter((event) => event.type === 'stream-connected').length >= 11 || failure() !== undefined,
      20_000,
      'eleven long polls',
    );
    expect(failure()).toBeUndefined();
    expect(client.getState().status.type).not.toBe('error');
    controller.abort();
    await reading;
    client.close();
  }, 25_000);

  it.each([
    ['held 10 s each (a proxy capping polls below the 60 s asked): not failures', 10_000],
    ['back at once each: failures, so a server that ignores the length cannot spin', 0],
  ])(
    'long polls that end with [DONE] early, %s',
    async (_name, heldMs) => {
      // The server holds each poll 1 s (it is asked for 1, the client believes 60, its default);
      // the client's clock moves `heldMs` with every poll.
      let offset = 0;
      const capped: typeof fetch = async (input, init) => {
        const headers = new Headers(init?.headers);
        if (!headers.has('timeout-seconds')) return fetch(input, init);
        headers.set('timeout-seconds', '1');
        const response = await fetch(input, { ...init, headers });
        // The poll's [DONE] comes `heldMs` after it opened, on the client's clock.
        const held = new TransformStream<Uint8Array, Uint8Array>({
          transform: (chunk, controller) => {
            if (new TextDecoder().decode(chunk).includes('[DONE]')) offset += heldMs;
            controller.enqueue(chunk);
          },
        });
        return new Response(response.body?.pipeThrough(held), response);
      };
      const { client, events } = makeClient({
        fetch: capped,
        environment: { warn: () => {}, now: () => Date.now() + offset },
      });
      await client.preload();
      const { controller, reading, failure } = readIdle(client); // a long silence of the agent
      const polls = () => events.filter((event) => event.type === 'stream-connected').length;
      await waitFor(() => polls() >= 10 || failure() !== undefined, 20_000, 'ten long polls, or a failure');
      if (heldMs > 0) expect(failure()).toBeUndefined();
      else expect(failure()).toMatchObject({ code: 'STREAM_DISCONNECTED' });
      controller.abort();
      await reading;
      client.close();
    },
    25_000,
  );

  it('wakes at once from a long backoff on `online`', async () => {
    const wake = createWakeSource();
    const { client, events } = makeClient({
      retry: { firstRetryDelayMs: 60_000, maxReconnectAttempts: 5 },
      environment: { onWake: wake.onWake, warn: () => {} },
    });
    await client.preload();
    server.faults.sendOutError('blip', { afterRecords: 0 });
    const controller = new AbortController();
    const reading = (async () => {
      for await (const _ of client.readOut({ signal: controller.signal })) {
        // idle
      }
    })();
    await waitFor(() => client.getState().status.type === 'reconnecting');
    wake.wake();
    await waitFor(
      () => events.filter((event) => event.type === 'stream-connected').length === 2,
      2_000,
      'a second connection',
    );
    controller.abort();
    await reading;
    client.close();
  });

  it('a 409 on .out closes the chat with the reason its body gives', async () => {
    const { client, events } = makeClient();
    await client.preload();
    await fetch(`${server.url}/api/v1/sessions/${client.getState().sessionId}/close`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.secretKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'archived by admin' }),
    });
    server.faults.failOutConnections(1, 409);
    const reading = (async () => {
      for await (const _ of client.readOut({})) {
        // nothing
      }
    })();
    await expect(reading).rejects.toMatchObject({
      code: 'SESSION_CLOSED',
      closedReason: 'archived by admin',
    });
    expect(client.getState()).toMatchObject({ closed: true, closedReason: 'archived by admin' });
    expect(events.filter((event) => event.type === 'session-closed')).toEqual([
      expect.objectContaining({ reason: 'archived by admin' }),
    ]);
    client.close();
  });

  it("waits for a 503's Retry-After before reading .out again", async () => {
    const { client, chatId } = makeClient();
    await client.append(say(chatId, 'read me after the deploy'));
    server.faults.failOutConnections(1, 503, { retryAfterSeconds: 1 });
    const started = Date.now();
    const items = await readTurn(client, undefined);
    expect(items.at(-1)).toMatchObject({ kind: 'control', control: 'turn-complete' });
    // Without the header the first reconnect comes within 25 ms.
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    client.close();
  });

  it('refreshes the token inside the reconnect loop after a 401', async () => {
    const { client, chatId, events } = makeClient();
    await client.append(say(chatId, 'keep going after expiry', { delayMs: 20 }));
    server.faults.expireTokens();
    server.faults.dropOutAfter(3);
    const items = await readTurn(client, undefined);
    expect(items.at(-1)).toMatchObject({ kind: 'control', control: 'turn-complete' });
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'token-refreshed', source: 'unauthorized' }),
    );
    client.close();
  });

  it('a fresh token refused again on .out is final (STALE_ACCESS_TOKEN), not retried forever', async () => {
    const { client } = makeClient({ getAccessToken: async () => 'refused.token.value' });
    await client.preload();
    server.faults.expireTokens();
    const reading = (async () => {
      for await (const _ of client.readOut({})) {
        // nothing
      }
    })();
    await expect(reading).rejects.toMatchObject({ code: 'STALE_ACCESS_TOKEN', status: 401 });
    client.close();
  });

  it('a token endpoint failing for a moment inside the reconnect loop is retried', async () => {
    let calls = 0;
    const start = startSessionVia(server);
    const { client, chatId } = makeClient({
      getAccessToken: async ({ chatId: id }) => {
        calls++;
        if (calls === 1) throw new Error('token endpoint blip');
        return (await start({ chatId: id, taskIdentifier: 'echo', clientData: undefined })).publicAccessToken;
      },
    });
    await client.append(say(chatId, 'carry on after a blip', { delayMs: 20 }));
    server.faults.expireTokens();
    server.faults.dropOutAfter(2);
    const items = await readTurn(client, undefined);
    expect(items.at(-1)).toMatchObject({ kind: 'control', control: 'turn-complete' });
    expect(calls).toBe(2);
    client.close();
  });

  it('refreshes before exp (proactively), and adopts the token from turn-complete', async () => {
    let refreshes = 0;
    let skewMs = 0; // the client's clock runs ahead instead of the test sleeping
    const start = startSessionVia(server);
    const { client, chatId, events } = makeClient({
      getAccessToken: async ({ chatId: id }) => {
        refreshes++;
        return (await start({ chatId: id, taskIdentifier: 'echo', clientData: undefined })).publicAccessToken;
      },
      environment: { now: () => Date.now() + skewMs, warn: () => {} },
    });
    await client.append(say(chatId, 'hi'));
    await readTurn(client, undefined);
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'token-refreshed', source: 'turn-complete' }),
    );
    expect(refreshes).toBe(0);
    const expiresAt = client.getState().tokenExpiresAt ?? 0;
    skewMs = expiresAt - Date.now() - 10_000; // ten seconds before exp: inside the refresh window
    await client.append(say(chatId, 'still me'));
    expect(refreshes).toBe(1);
    expect(events).toContainEqual(expect.objectContaining({ type: 'token-refreshed', source: 'expiry' }));
    client.close();
  });
});

describe('SessionClient.read', () => {
  it('a read that lends its own controller is stopped through it by close() (no second controller)', async () => {
    const chatId = uniqueChatId('client-lent');
    const client = new SessionClient({
      baseURL: server.url,
      chatId,
      taskIdentifier: 'echo',
      startSession: startSessionVia(server),
      environment: { warn: () => {} },
    });
    await client.preload();
    const lent = new AbortController();
    const ended = client.read(
      { from: undefined, signal: lent.signal, controller: lent },
      { onRecord: () => undefined },
    );
    await waitFor(() => client.busy && client.getState().status.type === 'streaming', 5_000, 'the read');
    client.close();
    expect(lent.signal.aborted).toBe(true);
    await expect(ended).resolves.toBe('aborted');
    expect(client.busy).toBe(false);
  });

  it('a read with only a signal still stops when that signal aborts, and close() leaves the signal alone', async () => {
    const client = new SessionClient({
      baseURL: server.url,
      chatId: uniqueChatId('client-signal'),
      taskIdentifier: 'echo',
      startSession: startSessionVia(server),
      environment: { warn: () => {} },
    });
    await client.preload();
    const outer = new AbortController();
    const first = client.read({ from: undefined, signal: outer.signal }, { onRecord: () => undefined });
    await waitFor(() => client.getState().status.type === 'streaming', 5_000, 'the first read');
    outer.abort();
    await expect(first).resolves.toBe('aborted');
    const other = new AbortController();
    const second = client.read({ from: undefined, signal: other.signal }, { onRecord: () => undefined });
    await waitFor(
      () => client.busy && client.getState().status.type === 'streaming',
      5_000,
      'the second read',
    );
    client.close();
    await expect(second).resolves.toBe('aborted');
    expect(other.signal.aborted).toBe(false);
  });
});

describe('SessionClient persistence', () => {
  it('with a scope: restores sessionId, token, cursor and turn state from the record; nothing else is needed', async () => {
    const records = new Map<string, PersistedChatRecord>();
    const first = makeClient({ persistence: memoryPersistence(records), scope: 'alice' });
    await first.client.append(say(first.chatId, 'remember me'));
    await readTurn(first.client, undefined);
    await first.client.flushPersistence();
    const saved = records.get(`@alice:${first.chatId}`);
    expect(saved).toMatchObject({
      version: 1,
      lastEventId: first.client.getState().lastEventId,
      closed: false,
    });
    first.client.close();

    let starts = 0;
    const second = makeClient({
      chatId: first.chatId,
      persistence: memoryPersistence(records),
      scope: 'alice',
      startSession: async () => {
        starts++;
        throw new Error('must not be called');
      },
    });
    await second.client.ready();
    expect(second.client.getState()).toMatchObject({
      sessionId: saved?.sessionId,
      token: saved?.publicAccessToken,
      lastEventId: saved?.lastEventId,
      hydrated: true,
    });
    await second.client.append(say(first.chatId, 'welcome back'));
    const items = await readTurn(second.client, second.client.getState().lastEventId);
    expect(items.some((item) => item.kind === 'data' && item.chunk.type === 'text-delta')).toBe(true);
    expect(starts).toBe(0);
    second.client.close();
  });

  it('a corrupt record is discarded with a warning, and the chat starts fresh', async () => {
    const warnings: string[] = [];
    const chatId = uniqueChatId('corrupt');
    const adapter = { load: () => '{"version":1', save: () => {}, remove: () => {} };
    const { client } = makeClient({
      chatId,
      persistence: adapter,
      environment: { warn: (m) => warnings.push(m) },
    });
    await client.ready();
    expect(warnings.some((warning) => warning.includes('corrupt'))).toBe(true);
    await client.append(say(chatId, 'fresh start'));
    expect(client.getState().sessionId).toMatch(/^session_/);
    client.close();
  });

  it('a persisted closed chat refuses sends without a request', async () => {
    const recorder = recordingFetch();
    const chatId = uniqueChatId('closed');
    const records = new Map<string, PersistedChatRecord>([
      [
        chatId,
        {
          version: 1,
          chatId,
          sessionId: 'session_x',
          publicAccessToken: 'a.b.c',
          lastEventId: 3,
          turnLive: false,
          turnStartCursor: undefined,
          closed: true,
          closedReason: 'archived',
        },
      ],
    ]);
    const { client } = makeClient({ chatId, persistence: memoryPersistence(records), fetch: recorder.fetch });
    await expect(client.append(say(chatId, 'no'))).rejects.toMatchObject({
      code: 'SESSION_CLOSED',
      closedReason: 'archived',
    });
    expect(recorder.requests).toHaveLength(0);
    client.close();
  });
});
