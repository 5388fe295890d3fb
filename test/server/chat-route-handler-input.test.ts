import { afterEach, describe, expect, it, vi } from 'vitest';
import { type ChatRouteHandlerOptions, createChatRouteHandler } from '../../src/server/chat-route-handler.js';
import {
  closeAfterEach,
  createdSession,
  type Reply,
  replyJson,
  startScriptedUpstream,
} from './support/listen.js';

const secretKey = 'sk_test_route_secret_91b2';
const closeLater = closeAfterEach();
afterEach(() => {
  vi.restoreAllMocks();
});

async function handlerFor(replies: Reply[], overrides: Partial<ChatRouteHandlerOptions> = {}) {
  const upstream = closeLater(await startScriptedUpstream(replies));
  const errors: unknown[] = [];
  const handler = createChatRouteHandler({
    baseURL: upstream.url,
    secretKey,
    taskIdentifier: 'echo',
    authorize: () => true,
    retry: { retries: 1, minDelayMs: 1, maxDelayMs: 50 },
    onError: (error) => errors.push(error),
    ...overrides,
  });
  return { handler, requests: upstream.requests, errors };
}

function post(body: unknown, init: { contentType?: string; method?: string; raw?: string } = {}): Request {
  return new Request('http://app.test/api/chat-session', {
    method: init.method ?? 'POST',
    headers: { 'content-type': init.contentType ?? 'application/json', cookie: 'user=alice' },
    body: init.method === 'GET' ? null : (init.raw ?? JSON.stringify(body)),
  });
}

async function answer(
  response: Response,
): Promise<{ status: number; body: Record<string, unknown>; text: string }> {
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) as Record<string, unknown>, text };
}

describe('createChatRouteHandler: input', () => {
  it('refuses anything but POST with 405 and an Allow header', async () => {
    const { handler, requests } = await handlerFor([replyJson(201, createdSession('c'))]);
    const response = await handler(post(undefined, { method: 'GET' }));
    expect(response.headers.get('allow')).toBe('POST');
    expect(await answer(response)).toMatchObject({ status: 405, body: { code: 'METHOD_NOT_ALLOWED' } });
    expect(requests).toHaveLength(0);
  });

  it('refuses a non-JSON content type with 415', async () => {
    const { handler, requests } = await handlerFor([replyJson(201, createdSession('c'))]);
    const body = { action: 'start', chatId: 'c' };
    const response = await handler(post(body, { contentType: 'text/plain' }));
    expect(await answer(response)).toMatchObject({ status: 415, body: { code: 'UNSUPPORTED_MEDIA_TYPE' } });
    expect(requests).toHaveLength(0);
  });

  it('answers 400 INVALID_INPUT for bad JSON, unknown actions and bad fields', async () => {
    const { handler, requests } = await handlerFor([replyJson(201, createdSession('c'))]);
    const cases: Array<[Request, RegExp]> = [
      [post(undefined, { raw: '{"action": "start", ' }), /not valid JSON/],
      [post([1, 2]), /body: must be a JSON object/],
      [post({ action: 'delete', chatId: 'c' }), /action: must be one of start, token, close/],
      [post({ action: 'start' }), /chatId: must be a non-empty string/],
      [post({ action: 'start', chatId: 'session_abc' }), /chatId: must not start with "session_"/],
      [post({ action: 'start', chatId: 'x'.repeat(257) }), /chatId: at most 256/],
      [post({ action: 'close', chatId: 'c', reason: 'r'.repeat(257) }), /reason: at most 256/],
      [post({ action: 'close', chatId: 'c', reason: 42 }), /reason: must be a string/],
    ];
    for (const [request, message] of cases) {
      const { status, body } = await answer(await handler(request));
      expect(status).toBe(400);
      expect(body.code).toBe('INVALID_INPUT');
      expect(body.error).toMatch(message);
    }
    expect(requests).toHaveLength(0);
  });

  it('answers 413 for a body over maxBodyBytes without reading it all', async () => {
    const { handler, requests } = await handlerFor([replyJson(201, createdSession('c'))], {
      maxBodyBytes: 100,
    });
    const big = { action: 'start', chatId: 'c', clientData: { note: 'n'.repeat(200) } };
    expect(await answer(await handler(post(big)))).toMatchObject({
      status: 413,
      body: { code: 'PAYLOAD_TOO_LARGE' },
    });
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(new TextEncoder().encode('{"pad":"'.padEnd(64, 'x')));
      },
    });
    const endless = new Request('http://app.test/api/chat-session', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect((await handler(endless)).status).toBe(413);
    expect(requests).toHaveLength(0);
  });

  it('answers 403 when authorize refuses, before any request upstream', async () => {
    const seen: unknown[] = [];
    const { handler, requests } = await handlerFor([replyJson(201, createdSession('c'))], {
      authorize: (request, chatId, action) => {
        seen.push([request.headers.get('cookie'), chatId, action]);
        return false;
      },
    });
    for (const body of [
      { action: 'start', chatId: 'c' },
      { action: 'token', chatId: 'c' },
      { action: 'close', chatId: 'c' },
    ]) {
      expect(await answer(await handler(post(body)))).toMatchObject({
        status: 403,
        body: { code: 'FORBIDDEN' },
      });
    }
    expect(seen).toEqual([
      ['user=alice', 'c', 'start'],
      ['user=alice', 'c', 'token'],
      ['user=alice', 'c', 'close'],
    ]);
    expect(requests).toHaveLength(0);
  });

  it('answers 500 INTERNAL_ERROR and reports when authorize throws', async () => {
    const { handler, requests, errors } = await handlerFor([replyJson(201, createdSession('c'))], {
      authorize: async () => {
        throw new Error('session store down');
      },
    });
    const { status, body } = await answer(await handler(post({ action: 'start', chatId: 'c' })));
    expect(status).toBe(500);
    expect(body).toEqual({ error: 'the chat route failed', code: 'INTERNAL_ERROR' });
    expect(errors).toHaveLength(1);
    expect(requests).toHaveLength(0);
  });

  it('answers 500 and sends nothing when createOptions yields an invalid create', async () => {
    const tooManyTags = Array.from({ length: 11 }, (_, index) => `t${index}`);
    const { handler, requests, errors } = await handlerFor([replyJson(201, createdSession('c'))], {
      createOptions: () => ({ tags: tooManyTags }),
    });
    const { status, body } = await answer(await handler(post({ action: 'start', chatId: 'c' })));
    expect(status).toBe(500);
    expect(body.code).toBe('INTERNAL_ERROR');
    expect(errors[0]).toMatchObject({ code: 'INVALID_INPUT', field: 'tags' });
    expect(requests).toHaveLength(0);
  });

  it('fails requests, not construction, when the secret key is missing', async () => {
    const { handler, requests, errors } = await handlerFor([replyJson(201, createdSession('c'))], {
      secretKey: '',
    });
    const { status, body } = await answer(await handler(post({ action: 'start', chatId: 'c' })));
    expect(status).toBe(500);
    expect(body).toMatchObject({ code: 'INVALID_CONFIG' });
    expect(errors[0]).toMatchObject({ code: 'INVALID_CONFIG', field: 'secretKey' });
    expect(requests).toHaveLength(0);
  });
});
