import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DevServer, echoAgent, startDevServer } from '../../src/dev-server/index.js';
import { headStartChunk } from '../../src/protocol/input-chunks.js';
import { createHeadStartHandler, type HeadStartHandlerOptions } from '../../src/server/head-start-handler.js';
import { routeModel, streamTextReply } from '../transport/support/head-start-app.js';

let server: DevServer;
beforeAll(async () => {
  server = await startDevServer({ port: 0, agents: [echoAgent], logger: { warn() {} } });
});
afterAll(() => server.close());

function handler(overrides: Partial<HeadStartHandlerOptions> = {}) {
  return createHeadStartHandler({
    baseURL: server.url,
    secretKey: server.secretKey,
    taskIdentifier: 'echo',
    authorize: () => true,
    reply: streamTextReply(routeModel()),
    onError: () => {},
    ...overrides,
  });
}

const user = { id: 'u1', role: 'user' as const, parts: [{ type: 'text' as const, text: 'hi' }] };
const post = (body: unknown, init: RequestInit = {}) =>
  new Request('http://app.test/api/chat/head-start', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...init,
  });

describe('createHeadStartHandler', () => {
  it('answers bad requests with the route’s error shape before creating anything', async () => {
    const handle = handler();
    const cases: Array<[Request, number, string]> = [
      [new Request('http://app.test/x', { method: 'GET' }), 405, 'METHOD_NOT_ALLOWED'],
      [post('{}', { headers: { 'content-type': 'text/plain' } }), 415, 'UNSUPPORTED_MEDIA_TYPE'],
      [post('not json'), 400, 'INVALID_INPUT'],
      [post(headStartChunk({ chatId: 'hs-bad', headStartMessages: [] })), 400, 'INVALID_INPUT'],
      [
        post(
          headStartChunk({ chatId: 'hs-bad', headStartMessages: [{ ...user, role: 'assistant' as const }] }),
        ),
        400,
        'INVALID_INPUT',
      ],
      [post('x'.repeat(2_000)), 413, 'PAYLOAD_TOO_LARGE'],
    ];
    const small = handler({ maxBodyBytes: 1_000 });
    for (const [request, status, code] of cases) {
      const response = await (status === 413 ? small : handle)(request);
      expect(response.status).toBe(status);
      expect(await response.json()).toMatchObject({ code });
    }
    expect(server.inspect('hs-bad')).toBeUndefined();
  });

  it('a closed session is 409 SESSION_CLOSED; an existing one 409 SESSION_EXISTS', async () => {
    const handle = handler();
    const first = await handle(post(headStartChunk({ chatId: 'hs-twice', headStartMessages: [user] })));
    expect(first.status).toBe(200);
    await first.text();
    const again = await handle(post(headStartChunk({ chatId: 'hs-twice', headStartMessages: [user] })));
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ code: 'SESSION_EXISTS' });
    const sessionId = server.inspect('hs-twice')?.row.id ?? '';
    await fetch(`${server.url}/api/v1/sessions/${sessionId}/close`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.secretKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'done' }),
    });
    const closed = await handle(post(headStartChunk({ chatId: 'hs-twice', headStartMessages: [user] })));
    expect(closed.status).toBe(409);
    expect(await closed.json()).toMatchObject({ code: 'SESSION_CLOSED', closedReason: 'done' });
  });

  it('streams the session first, the reply, the handover last; hands waitUntil the handover', async () => {
    const kept: Promise<unknown>[] = [];
    const handle = handler({ waitUntil: (promise) => kept.push(promise) });
    const response = await handle(post(headStartChunk({ chatId: 'hs-frames', headStartMessages: [user] })));
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(response.headers.get('cache-control')).toBe('no-store');
    const frames = (await response.text())
      .split('\n\n')
      .filter((frame) => frame.startsWith('data: '))
      .map((frame) => frame.slice('data: '.length));
    expect(frames.at(-1)).toBe('[DONE]');
    const chunks = frames.slice(0, -1).map((frame) => JSON.parse(frame) as { type: string; data?: unknown });
    expect(chunks[0]).toMatchObject({ type: 'data-durable-chat-session', transient: true });
    expect(chunks.at(-1)).toMatchObject({
      type: 'data-durable-chat-handover',
      data: { inSeq: 0 },
      transient: true,
    });
    expect(chunks.map((chunk) => chunk.type)).toContain('text-delta');
    expect(kept).toHaveLength(1);
    await kept[0];
    expect(server.inspect('hs-frames')?.in.nextSeq).toBe(1);
  });
});
