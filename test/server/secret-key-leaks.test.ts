import { describe, expect, it } from 'vitest';
import { createChatRouteHandler } from '../../src/server/chat-route-handler.js';
import { createSessionsApi } from '../../src/server/sessions-api.js';
import { failure } from './support/failure.js';
import { closeAfterEach, hostFetchHandler, type Reply, startScriptedUpstream } from './support/listen.js';

const secretKey = 'sk_test_do_not_leak_51c0';
const request = {
  taskIdentifier: 'echo',
  externalId: 'chat-1',
  triggerConfig: { basePayload: { chatId: 'chat-1', trigger: 'preload' as const } },
};
const closeLater = closeAfterEach();

/** Everything an error carries that a log could print: message, fields, the cause chain. */
function everythingIn(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && current !== null && depth < 10; depth++) {
    parts.push(String(current), JSON.stringify(current) ?? '');
    if (current instanceof Error) parts.push(current.message, current.stack ?? '');
    current = (current as { cause?: unknown }).cause;
  }
  return parts.join('\n');
}

// The key written the way JSON may write it: every character a `\uXXXX` escape.
const escaped = (text: string) =>
  [...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');

describe('the secret key never reaches an error', () => {
  it('is redacted when the service echoes it with JSON escapes', async () => {
    const echo: Reply = (_recorded, response) => {
      response.writeHead(500, { 'content-type': 'application/json' });
      response.end(`{"error":"bad header: Bearer ${escaped(secretKey)}","${escaped(secretKey)}":1}`);
    };
    const upstream = closeLater(await startScriptedUpstream([echo]));
    const sessions = createSessionsApi({ baseURL: upstream.url, secretKey, retry: { retries: 0 } });
    const error = await failure(sessions.create(request));
    expect(error).toMatchObject({ code: 'SERVER_ERROR' });
    expect(error.message).toContain('[redacted]');
    expect(everythingIn(error)).not.toContain(secretKey);
  });

  it.each([
    ['a CR', `${secretKey}\r\nx-injected: 1`],
    ['a NUL', `${secretKey}\u0000`],
    ['a trailing newline', `${secretKey}\n`],
  ])('a key with %s is rejected at construction, without quoting it', (_what, badKey) => {
    let thrown: unknown;
    try {
      createSessionsApi({ baseURL: 'http://127.0.0.1:9', secretKey: badKey });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: 'INVALID_INPUT', field: 'secretKey' });
    expect(everythingIn(thrown)).not.toContain(secretKey);
  });

  it('a route with a CR in its key reports a typed error to onError that does not contain the key', async () => {
    const upstream = closeLater(await startScriptedUpstream([(_r, response) => response.end('{}')]));
    const reported: unknown[] = [];
    const route = closeLater(
      await hostFetchHandler(
        createChatRouteHandler({
          baseURL: upstream.url,
          secretKey: `${secretKey}\r`,
          taskIdentifier: 'echo',
          authorize: () => true,
          onError: (error) => reported.push(error),
        }),
      ),
    );
    const response = await fetch(route.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ action: 'start', chatId: 'chat-1' }),
    });
    expect(response.status).toBe(500);
    expect(await response.text()).not.toContain(secretKey);
    expect(reported).toHaveLength(1);
    expect(reported[0]).toMatchObject({ code: 'INVALID_CONFIG', field: 'secretKey' });
    expect(everythingIn(reported[0])).not.toContain(secretKey);
    expect(upstream.requests).toHaveLength(0);
  });
});
