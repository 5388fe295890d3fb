import { afterEach, describe, expect, it, vi } from 'vitest';
import { type ChatRouteHandlerOptions, createChatRouteHandler } from '../../src/server/chat-route-handler.js';
import {
  closeAfterEach,
  createdSession,
  type Reply,
  replyJson,
  startScriptedUpstream,
} from './support/listen.js';

const secretKey = 'sk_test_route_secret_5e8d';
const closeLater = closeAfterEach();
afterEach(() => {
  vi.restoreAllMocks();
});

async function handlerFor(replies: Reply[], overrides: Partial<ChatRouteHandlerOptions> = {}) {
  const upstream = closeLater(await startScriptedUpstream(replies));
  const handler = createChatRouteHandler({
    baseURL: upstream.url,
    secretKey,
    taskIdentifier: 'echo',
    authorize: () => true,
    retry: { retries: 1, minDelayMs: 1, maxDelayMs: 50 },
    ...overrides,
  });
  return { handler, requests: upstream.requests, upstream };
}

function post(body: unknown): Request {
  return new Request('http://app.test/api/chat-session', {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify(body),
  });
}

const echoKey: Reply = (recorded, response) =>
  replyJson(500, { error: `upstream broke; you sent ${recorded.authorization}` })(recorded, response);

describe('createChatRouteHandler: the session service', () => {
  it('builds the create from its own options, never from the browser', async () => {
    const { handler, requests } = await handlerFor([replyJson(201, createdSession('chat-7'))], {
      createOptions: (_request, chatId, clientData) => ({
        tags: ['web'],
        metadata: { plan: 'pro' },
        expiresAt: '2030-01-01T00:00:00.000Z',
        triggerConfig: { machine: 'small-1x', maxAttempts: 2 },
        clientData: { ...(clientData as object), userId: `user-of-${chatId}` },
      }),
    });
    const response = await handler(
      post({
        action: 'start',
        chatId: 'chat-7',
        clientData: { theme: 'dark' },
        plan: 'admin', // an unknown field: dropped
      }),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.json()).toEqual({
      publicAccessToken: 'token-for-chat-7',
      sessionId: 'session_chat-7',
      currentRunId: 'run_1',
      isCached: false,
    });
    expect(requests[0]?.body).toEqual({
      type: 'chat.agent',
      taskIdentifier: 'echo',
      externalId: 'chat-7',
      tags: ['web'],
      metadata: { plan: 'pro' },
      expiresAt: '2030-01-01T00:00:00.000Z',
      triggerConfig: {
        machine: 'small-1x',
        maxAttempts: 2,
        basePayload: {
          chatId: 'chat-7',
          trigger: 'preload',
          metadata: { theme: 'dark', userId: 'user-of-chat-7' },
        },
      },
    });
  });

  it('maps an upstream failure to 502 without the secret key or upstream text', async () => {
    const reported: unknown[] = [];
    const { handler } = await handlerFor([echoKey], { onError: (error) => reported.push(error) });
    for (const body of [
      { action: 'start', chatId: 'c' },
      { action: 'token', chatId: 'c' },
      { action: 'close', chatId: 'c' },
    ]) {
      const response = await handler(post(body));
      const text = await response.text();
      expect(response.status).toBe(502);
      expect(JSON.parse(text)).toEqual({
        error: 'the session service failed; retry later',
        code: 'UPSTREAM_ERROR',
      });
      expect(text).not.toContain(secretKey);
      expect(text).not.toContain('upstream broke');
    }
    expect(reported).toHaveLength(3);
    for (const error of reported) {
      expect((error as Error).message).not.toContain(secretKey);
      expect(JSON.stringify(error)).not.toContain(secretKey);
    }
  });

  it('logs one line per server-side failure by default, without the key', async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
      lines.push(args.map(String).join(' '));
    });
    const { handler } = await handlerFor([echoKey]);
    expect((await handler(post({ action: 'token', chatId: 'c' }))).status).toBe(502);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/chat route "token" failed: ServerError SERVER_ERROR/);
    expect(lines[0]).toContain('[redacted]');
    expect(lines[0]).not.toContain(secretKey);
  });

  it('maps a rejected secret key to 500 SECRET_KEY_REJECTED, not to an auth error the browser would retry', async () => {
    const reported: unknown[] = [];
    const { handler } = await handlerFor([replyJson(401, { error: 'Invalid API key' })], {
      onError: (error) => reported.push(error),
    });
    const response = await handler(post({ action: 'start', chatId: 'c' }));
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ code: 'SECRET_KEY_REJECTED' });
    expect(reported).toEqual([
      expect.objectContaining({ code: 'SECRET_KEY_REJECTED', field: 'secretKey', retryable: false }),
    ]);
  });

  it('passes a closed session through as 409 SESSION_CLOSED', async () => {
    const closed = replyJson(409, { error: 'Session is closed', code: 'session_closed' });
    const { handler } = await handlerFor([closed]);
    const response = await handler(post({ action: 'token', chatId: 'c' }));
    expect(response.status).toBe(409);
    expect(await response.json()).toEqual({
      error: 'the session is closed',
      code: 'SESSION_CLOSED',
      closedReason: null,
    });
  });

  it('passes a long rate limit through as 429 with its reset time', async () => {
    const reset = String(Date.now() + 60_000);
    const limited = replyJson(429, { error: 'slow down' }, { 'x-ratelimit-reset': reset });
    const { handler } = await handlerFor([limited], { onError: () => {} });
    const response = await handler(post({ action: 'start', chatId: 'c' }));
    expect(response.status).toBe(429);
    expect(response.headers.get('x-ratelimit-reset')).toBe(reset);
    expect(await response.json()).toMatchObject({ code: 'RATE_LIMITED' });
  });

  it('maps an unreachable service to 502', async () => {
    const reported: unknown[] = [];
    const { handler, upstream } = await handlerFor([replyJson(201, {})], {
      onError: (error) => reported.push(error),
    });
    await upstream.close();
    const response = await handler(post({ action: 'close', chatId: 'c', reason: 'done' }));
    expect(response.status).toBe(502);
    expect(reported[0]).toMatchObject({ code: 'NETWORK_ERROR' });
  });
});
