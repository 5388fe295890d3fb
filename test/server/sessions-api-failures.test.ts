import { describe, expect, it } from 'vitest';
import { createSessionsApi } from '../../src/server/sessions-api.js';
import { failure } from './support/failure.js';
import {
  closeAfterEach,
  createdSession,
  type Reply,
  replyDrop,
  replyJson,
  startScriptedUpstream,
} from './support/listen.js';

const secretKey = 'sk_test_do_not_leak_7f3a9c';
const fast = { retries: 2, minDelayMs: 1, maxDelayMs: 200 };
const request = {
  taskIdentifier: 'echo',
  externalId: 'chat-1',
  triggerConfig: { basePayload: { chatId: 'chat-1', trigger: 'preload' as const } },
};

const closeLater = closeAfterEach();

async function api(replies: Reply[], extra: { timeoutMs?: number } = {}) {
  const upstream = closeLater(await startScriptedUpstream(replies));
  const sessions = createSessionsApi({ baseURL: `${upstream.url}/`, secretKey, retry: fast, ...extra });
  return { sessions, requests: upstream.requests, upstream };
}

describe('createSessionsApi against a failing service', () => {
  it('sends the secret key as a bearer token to the sessions path', async () => {
    const { sessions, requests } = await api([replyJson(201, createdSession('chat-1'))]);
    const session = await sessions.create(request);
    expect(session.publicAccessToken).toBe('token-for-chat-1');
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({
      method: 'POST',
      path: '/api/v1/sessions',
      authorization: `Bearer ${secretKey}`,
      body: { ...request, type: 'chat.agent' },
    });
  });

  it('retries a 5xx on an idempotent create and succeeds', async () => {
    const { sessions, requests } = await api([
      replyJson(503, { error: 'busy' }),
      replyJson(201, createdSession('chat-1')),
    ]);
    await expect(sessions.create(request)).resolves.toMatchObject({ id: 'session_chat-1' });
    expect(requests).toHaveLength(2);
  });

  it('does not retry a 5xx when the create has no externalId', async () => {
    const { sessions, requests } = await api([
      replyJson(500, { error: 'boom' }),
      replyJson(201, createdSession('x')),
    ]);
    const { externalId: _omitted, ...withoutExternalId } = request;
    const error = await failure(sessions.create(withoutExternalId));
    expect(error).toMatchObject({ code: 'SERVER_ERROR', status: 500, retryable: true });
    expect(requests).toHaveLength(1);
  });

  it('gives up after the retries and reports the last 5xx', async () => {
    const { sessions, requests } = await api([replyJson(502, { error: 'bad gateway' })]);
    const error = await failure(sessions.create(request));
    expect(error.code).toBe('SERVER_ERROR');
    expect(requests).toHaveLength(3);
  });

  it('maps dropped connections to ConnectionError NETWORK_ERROR after retrying', async () => {
    const { sessions, requests } = await api([replyDrop]);
    const error = await failure(sessions.close('session_1'));
    expect(error).toMatchObject({ name: 'ConnectionError', code: 'NETWORK_ERROR', retryable: true });
    expect(requests).toHaveLength(3);
  });

  it('reports an unreachable service as NETWORK_ERROR', async () => {
    const { sessions, upstream } = await api([replyJson(200, {})]);
    await upstream.close();
    const error = await failure(sessions.create(request));
    expect(error.code).toBe('NETWORK_ERROR');
  });

  it('waits for a 429 reset and retries even a non-idempotent create', async () => {
    const resetAt = () => String(Date.now() + 30);
    const limited: Reply = (recorded, response) =>
      replyJson(429, { error: 'slow down' }, { 'x-ratelimit-reset': resetAt() })(recorded, response);
    const { sessions, requests } = await api([limited, replyJson(201, createdSession('y'))]);
    const { externalId: _omitted, ...withoutExternalId } = request;
    await expect(sessions.create(withoutExternalId)).resolves.toMatchObject({ id: 'session_y' });
    expect(requests).toHaveLength(2);
  });

  it('throws RateLimitedError at once when the reset is beyond maxDelayMs', async () => {
    const reset = String(Date.now() + 60_000);
    const { sessions, requests } = await api([
      replyJson(429, { error: 'later' }, { 'x-ratelimit-reset': reset }),
    ]);
    const error = await failure(sessions.create(request));
    expect(error).toMatchObject({ name: 'RateLimitedError', code: 'RATE_LIMITED', resetAt: Number(reset) });
    expect(requests).toHaveLength(1);
  });

  it('does not retry a rejected secret key', async () => {
    const { sessions, requests } = await api([replyJson(401, { error: 'Invalid API key' })]);
    const error = await failure(sessions.create(request));
    expect(error).toMatchObject({ code: 'SECRET_KEY_REJECTED', status: 401, retryable: false });
    expect(error.message).toContain('rejected the secret key (HTTP 401: Invalid API key)');
    expect(requests).toHaveLength(1);
  });

  it('redacts the secret key when the service echoes it back', async () => {
    const echo: Reply = (recorded, response) =>
      replyJson(500, { error: `bad header: ${recorded.authorization}` })(recorded, response);
    const { sessions } = await api([echo]);
    const error = await failure(sessions.create(request));
    expect(error.message).toContain('[redacted]');
    expect(error.message).not.toContain(secretKey);
    expect(JSON.stringify(error)).not.toContain(secretKey);
  });

  it('rejects a 2xx that is not JSON or lacks the session fields', async () => {
    const notJson: Reply = (_recorded, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<html>login</html>');
    };
    const first = await api([notJson]);
    expect(await failure(first.sessions.create(request))).toMatchObject({ code: 'UNEXPECTED_RESPONSE' });
    await first.upstream.close();
    const second = await api([replyJson(200, { id: 'session_1', runId: 'run_1', isCached: true })]);
    const error = await failure(second.sessions.create(request));
    expect(error).toMatchObject({ name: 'ProtocolError', code: 'UNEXPECTED_RESPONSE' });
    expect(error.message).toContain('publicAccessToken');
  });

  it('times out a silent service per attempt', async () => {
    const silent: Reply = () => {};
    const { sessions, requests } = await api([silent], { timeoutMs: 50 });
    const error = await failure(sessions.close('session_1'));
    expect(error.code).toBe('NETWORK_ERROR');
    expect(error.message).toContain('50 ms');
    expect(requests).toHaveLength(3);
  });

  it('stops at once when the caller aborts', async () => {
    const silent: Reply = () => {};
    const { sessions } = await api([silent]);
    const controller = new AbortController();
    const pending = sessions.create(request, { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    const error = await failure(pending);
    expect(error).toMatchObject({ code: 'ABORTED', retryable: false });
  });

  it('rejects a bad configuration without sending anything', () => {
    expect(() => createSessionsApi({ baseURL: 'not a url', secretKey })).toThrow(/baseURL/);
    expect(() => createSessionsApi({ baseURL: 'http://127.0.0.1:1', secretKey: ' ' })).toThrow(/secretKey/);
  });
});
