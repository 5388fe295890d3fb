import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type DevServer, echoAgent, startDevServer } from '../../src/dev-server/index.js';
import { MIB } from '../../src/protocol/index.js';
import {
  append,
  createSession,
  openChat,
  readOut,
  replyText,
  sendText,
  untilTurnCompletes,
  userMessage,
} from './support/client.js';

let server: DevServer;
beforeAll(async () => {
  server = await startDevServer({ agents: [echoAgent], logger: { warn() {} } });
});
afterEach(() => server.faults.reset());
afterAll(() => server.close());

const message = (chatId: string, text: string) => ({
  kind: 'message' as const,
  payload: { chatId, trigger: 'submit-message' as const, message: userMessage(text) },
});

describe('POST .in/append', () => {
  it('answers 401 without a valid token and 403 with another session’s token', async () => {
    const a = await openChat(server, 'append-auth-a');
    const b = await openChat(server, 'append-auth-b');
    const missing = await fetch(`${server.url}/realtime/v1/sessions/${a.chatId}/in/append`, {
      method: 'POST',
      body: '{}',
    });
    expect(missing.status).toBe(401);
    expect(await missing.json()).toMatchObject({ ok: false });
    expect((await append(server, a.chatId, 'not-a-jwt', message(a.chatId, 'x'))).status).toBe(401);
    const forbidden = await append(server, a.chatId, b.token, message(a.chatId, 'x'));
    expect(forbidden.status).toBe(403);
    expect(await forbidden.json()).toMatchObject({
      ok: false,
      error: expect.stringContaining('write:sessions'),
    });
  });

  it('authorises one token on both the externalId and the friendly-id URL forms', async () => {
    const c = await openChat(server, 'append-forms');
    expect((await append(server, c.chatId, c.token, message(c.chatId, 'one'))).status).toBe(200);
    expect((await append(server, c.id, c.token, message(c.chatId, 'two'))).status).toBe(200);
    const read = await readOut(server, c.id, c.token, { until: untilTurnCompletes(2) });
    expect(replyText(read.records)).toBe('Echo: oneEcho: two');
  });

  it('answers 409 with code session_closed and the reason once closed', async () => {
    const c = await openChat(server, 'append-closed');
    await fetch(`${server.url}/api/v1/sessions/${c.id}/close`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.secretKey}` },
      body: JSON.stringify({ reason: 'archived' }),
    });
    const response = await append(server, c.chatId, c.token, message(c.chatId, 'late'));
    expect(response.status).toBe(409);
    expect(await response.json()).toEqual({
      ok: false,
      error: 'appending to a closed session is not allowed',
      code: 'session_closed',
      closedReason: 'archived',
    });
    // Reads still work on a closed session.
    expect((await readOut(server, c.chatId, c.token, { timeoutSeconds: 1 })).status).toBe(200);
  });

  it('answers 413 for a body over 1 MiB and for a stored record over the ceiling', async () => {
    const c = await openChat(server, 'append-large');
    const big = JSON.stringify(message(c.chatId, 'a'.repeat(MIB)));
    const tooBig = await append(server, c.chatId, c.token, big);
    expect(tooBig.status).toBe(413);
    expect(tooBig.headers.get('access-control-allow-origin')).toBe('*');
    // 600 KB of quotes: under 1 MiB as sent, over it once JSON-wrapped.
    const quotes = JSON.stringify(message(c.chatId, '"'.repeat(300 * 1024)));
    expect(quotes.length).toBeLessThan(MIB);
    const wrapped = await append(server, c.chatId, c.token, quotes);
    expect(wrapped.status).toBe(413);
    expect(((await wrapped.json()) as { error: string }).error).toContain('stored record');
    expect(server.inspect(c.chatId)?.in.nextSeq).toBe(0);
  });

  it('answers 400 for a chunk that is not a ChatInputChunk', async () => {
    const c = await openChat(server, 'append-bad');
    for (const body of [
      '{',
      '{"kind":"shout"}',
      '{"kind":"message","payload":{"chatId":"x","trigger":"submit-message"}}',
    ]) {
      const response = await append(server, c.chatId, c.token, body);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ ok: false });
    }
  });

  it('stores a repeated X-Part-Id once and answers with the original seq', async () => {
    const c = await openChat(server, 'append-idempotent');
    const first = await append(server, c.chatId, c.token, message(c.chatId, 'once'), 'part-1');
    const again = await append(server, c.chatId, c.token, message(c.chatId, 'once'), 'part-1');
    const other = await append(server, c.chatId, c.token, message(c.chatId, 'twice'), 'part-2');
    expect(await first.json()).toEqual({ ok: true, seq: 0 });
    expect(await again.json()).toEqual({ ok: true, seq: 0 });
    expect(await other.json()).toEqual({ ok: true, seq: 1 });
    const read = await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(2) });
    expect(replyText(read.records)).toBe('Echo: onceEcho: twice');
  });

  it('fails the next appends with 500 or 429 (rate-limit headers, reset in epoch ms), storing nothing', async () => {
    const c = await openChat(server, 'append-faults');
    server.faults.failAppends(1, 500);
    server.faults.failAppends(1, 429, { resetInMs: 2000, limit: 30 });
    const failed = await append(server, c.chatId, c.token, message(c.chatId, 'a'), 'p');
    expect(failed.status).toBe(500);
    expect(await failed.json()).toMatchObject({ ok: false });
    const before = Date.now();
    const limited = await append(server, c.chatId, c.token, message(c.chatId, 'a'), 'p');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('x-ratelimit-limit')).toBe('30');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    const reset = Number(limited.headers.get('x-ratelimit-reset'));
    expect(reset).toBeGreaterThanOrEqual(before + 2000);
    expect(reset).toBeLessThan(before + 60_000);
    const stored = await append(server, c.chatId, c.token, message(c.chatId, 'a'), 'p');
    expect(await stored.json()).toEqual({ ok: true, seq: 0 });
  });

  it('can lose the response after storing: the retry with the same part id gets the original seq', async () => {
    const c = await openChat(server, 'append-lost');
    server.faults.loseAppendResponses(1);
    await expect(append(server, c.chatId, c.token, message(c.chatId, 'kept'), 'lost-1')).rejects.toThrow();
    const retry = await append(server, c.chatId, c.token, message(c.chatId, 'kept'), 'lost-1');
    expect(await retry.json()).toEqual({ ok: true, seq: 0 });
    expect(server.inspect(c.chatId)?.in.nextSeq).toBe(1);
  });

  it('expires and revokes tokens on demand', async () => {
    const c = await openChat(server, 'append-tokens');
    const fresh = await createSession(server, { externalId: 'append-tokens' });
    server.faults.revokeToken(fresh.body.publicAccessToken);
    expect((await sendText(server, c.chatId, fresh.body.publicAccessToken, c.chatId, 'x')).status).toBe(401);
    expect((await sendText(server, c.chatId, c.token, c.chatId, 'x')).status).toBe(200);
    server.faults.expireTokens();
    expect((await sendText(server, c.chatId, c.token, c.chatId, 'x')).status).toBe(401);
    const renewed = await createSession(server, { externalId: 'append-tokens' });
    expect((await sendText(server, c.chatId, renewed.body.publicAccessToken, c.chatId, 'x')).status).toBe(
      200,
    );
  });

  it('refuses a token past its lifetime', async () => {
    let now = Date.now();
    const shortLived = await startDevServer({
      agents: [echoAgent],
      tokenTtlSeconds: 60,
      clock: () => now,
      logger: { warn() {} },
    });
    try {
      const created = await createSession(shortLived, { externalId: 'ttl' });
      const token = created.body.publicAccessToken;
      expect((await sendText(shortLived, 'ttl', token, 'ttl', 'x')).status).toBe(200);
      now += 61_000;
      const expired = await sendText(shortLived, 'ttl', token, 'ttl', 'x');
      expect(expired.status).toBe(401);
      expect(((await expired.json()) as { error: string }).error).not.toContain(token);
    } finally {
      await shortLived.close();
    }
  });
});
