import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoAgent, startDevServer } from '../../src/dev-server/index.js';
import { readTokenClaims } from '../../src/protocol/token-claims.js';
import { createRouteSessionCallbacks } from '../../src/route-client/create-route-session-callbacks.js';
import { type ChatRouteHandlerOptions, createChatRouteHandler } from '../../src/server/chat-route-handler.js';
import {
  createNodeChatRouteHandler,
  type NodeHandler,
  toNodeHandler,
} from '../../src/server/node-handler.js';
import { closeAfterEach, hostFetchHandler, type Listening, listen } from './support/listen.js';
import { postChunked } from './support/route-lifecycle.js';
import { appendWithToken } from './support/session-service.js';

// The Node adapter on real `node:http` servers over loopback, against the dev server: as a
// plain request listener and inside a connect/Express-style middleware stack.

let devServer: Awaited<ReturnType<typeof startDevServer>>;
const track = closeAfterEach();

beforeAll(async () => {
  devServer = await startDevServer({ port: 0, agents: [echoAgent] });
});
afterAll(async () => {
  await devServer?.close();
});

let counter = 0;
const newChatId = () => `node-adapter-${Date.now()}-${++counter}`;

function routeOptions(extra: Partial<ChatRouteHandlerOptions> = {}): ChatRouteHandlerOptions {
  return {
    baseURL: devServer.url,
    secretKey: devServer.secretKey,
    taskIdentifier: 'echo',
    authorize: (request) => request.headers.get('x-user') !== 'mallory',
    onError: () => {},
    ...extra,
  };
}

/** `handler` as `http.createServer`'s request listener. */
function hostNode(handler: NodeHandler): Promise<Listening> {
  return listen(createServer((req, res) => void handler(req, res)));
}

type Middleware = (req: IncomingMessage & { body?: unknown }, res: ServerResponse, next: () => void) => void;

/**
 * A connect/Express-style stack: middlewares in order, each mounted at a path prefix
 * (stripped from `req.url`, kept in `req.originalUrl`, as Express does).
 */
function hostStack(layers: Array<[prefix: string, middleware: Middleware]>): Promise<Listening> {
  return listen(
    createServer((req: IncomingMessage & { originalUrl?: string }, res) => {
      req.originalUrl = req.url;
      const run = (index: number) => {
        const layer = layers[index];
        if (layer === undefined) {
          res.statusCode = 404;
          res.end('no route');
          return;
        }
        const [prefix, middleware] = layer;
        const path = req.originalUrl ?? '/';
        if (!path.startsWith(prefix)) return run(index + 1);
        req.url = path.slice(prefix.length) || '/';
        middleware(req, res, () => run(index + 1));
      };
      run(0);
    }),
  );
}

/** Like `express.json()`: parses a JSON body into `req.body` before the route runs. */
const jsonBodyParser: Middleware = (req, _res, next) => {
  if (!(req.headers['content-type'] ?? '').startsWith('application/json')) return next();
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    req.body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    next();
  });
};

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

describe('createNodeChatRouteHandler on node:http', () => {
  it('starts a session through the browser callbacks; its token works; token and close answer', async () => {
    const app = track(await hostNode(createNodeChatRouteHandler(routeOptions())));
    const chatId = newChatId();
    const callbacks = createRouteSessionCallbacks({ endpoint: `${app.url}/api/chat-session` });
    const started = await callbacks.startSession({ chatId, taskIdentifier: 'echo', clientData: undefined });
    expect(started.sessionId).toMatch(/^session_/);
    expect(started.isCached).toBe(false);
    expect(readTokenClaims(started.publicAccessToken)?.scopes).toContain(`write:sessions:${chatId}`);
    expect((await appendWithToken(devServer.url, chatId, started.publicAccessToken)).status).toBe(200);
    expect(await callbacks.getAccessToken({ chatId })).toMatch(/^eyJ/);
    await callbacks.closeSession({ chatId, reason: 'done' });
  });

  it('answers every error exactly as the Fetch handler does', async () => {
    const options = routeOptions({ maxBodyBytes: 1024 });
    const node = track(await hostNode(createNodeChatRouteHandler(options)));
    const fetchApp = track(await hostFetchHandler(createChatRouteHandler(options)));
    const wrongKey = routeOptions({ secretKey: 'sk_dev_wrong' });
    const nodeWrongKey = track(await hostNode(createNodeChatRouteHandler(wrongKey)));
    const fetchWrongKey = track(await hostFetchHandler(createChatRouteHandler(wrongKey)));
    const start = { action: 'start', chatId: newChatId() };
    const cases: Array<[string, (base: string, wrong: string) => Promise<Response>]> = [
      ['GET', (base) => fetch(base)],
      ['text/plain', (base) => fetch(base, { method: 'POST', body: JSON.stringify(start) })],
      ['invalid JSON', (base) => postRaw(base, '{"action":')],
      ['unknown action', (base) => postRaw(base, JSON.stringify({ action: 'fly', chatId: 'x' }))],
      ['over the limit', (base) => postRaw(base, JSON.stringify({ ...start, clientData: 'x'.repeat(2000) }))],
      ['forbidden', (base) => postRaw(base, JSON.stringify(start), { 'x-user': 'mallory' })],
      ['wrong secret key', (_base, wrong) => postRaw(wrong, JSON.stringify(start))],
    ];
    for (const [name, send] of cases) {
      const viaNode = await send(node.url, nodeWrongKey.url);
      const viaFetch = await send(fetchApp.url, fetchWrongKey.url);
      expect(viaNode.status, name).toBe(viaFetch.status);
      expect(viaNode.status, name).toBeGreaterThanOrEqual(400);
      expect(viaNode.headers.get('content-type'), name).toBe(viaFetch.headers.get('content-type'));
      expect(viaNode.headers.get('allow'), name).toBe(viaFetch.headers.get('allow'));
      expect(await viaNode.json(), name).toEqual(await viaFetch.json());
    }
  });

  it('refuses a body over maxBodyBytes by its Content-Length, and a chunked one as it passes the limit', async () => {
    let calls = 0;
    const route = createNodeChatRouteHandler(routeOptions({ maxBodyBytes: 4096 }));
    const app = track(
      await hostNode((req, res) => {
        calls++;
        return route(req, res);
      }),
    );
    const declared = await post(app.url, {
      action: 'start',
      chatId: newChatId(),
      clientData: 'x'.repeat(5000),
    });
    expect(declared.status).toBe(413);
    expect(declared.body).toEqual({ code: 'PAYLOAD_TOO_LARGE', error: 'the body is over 4096 bytes' });
    // 64 MiB without a length: answered once the first 4 KiB are passed, not after all of it.
    const endless = await postChunked(app.url, 64 * 1024 * 1024);
    expect(endless.status).toBe(413);
    expect(JSON.parse(endless.text)).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect(calls).toBe(2);
  });
});

describe('createNodeChatRouteHandler in an Express-style middleware stack', () => {
  it('serves the route mounted at a path, after a JSON body parser read the body', async () => {
    const seenUrls: string[] = [];
    const route = createNodeChatRouteHandler(
      routeOptions({
        authorize: (request) => {
          seenUrls.push(new URL(request.url).pathname);
          return true;
        },
      }),
    );
    const app = track(
      await hostStack([
        ['/', jsonBodyParser],
        ['/api/chat-session', (req, res) => void route(req, res)],
      ]),
    );
    const chatId = newChatId();
    const callbacks = createRouteSessionCallbacks({ endpoint: `${app.url}/api/chat-session` });
    const started = await callbacks.startSession({ chatId, taskIdentifier: 'echo', clientData: { a: 1 } });
    expect((await appendWithToken(devServer.url, chatId, started.publicAccessToken)).status).toBe(200);
    // The Request carries the URL as the browser sent it, not the part the mount left.
    expect(seenUrls).toEqual(['/api/chat-session']);
  });

  it('serves the route without a body parser too, and keeps its errors', async () => {
    const route = createNodeChatRouteHandler(routeOptions());
    const app = track(await hostStack([['/api/chat-session', (req, res) => void route(req, res)]]));
    const started = await post(`${app.url}/api/chat-session`, { action: 'start', chatId: newChatId() });
    expect(started.status).toBe(200);
    expect(started.body.sessionId).toMatch(/^session_/);
    const forbidden = await post(
      `${app.url}/api/chat-session`,
      { action: 'start', chatId: newChatId() },
      { 'x-user': 'mallory' },
    );
    expect(forbidden).toMatchObject({ status: 403, body: { code: 'FORBIDDEN' } });
  });
});

describe('toNodeHandler', () => {
  it('streams a response body chunk by chunk as the handler produces it', async () => {
    let release: () => void = () => {};
    const secondChunkAllowed = new Promise<void>((resolve) => {
      release = resolve;
    });
    const encoder = new TextEncoder();
    const app = track(
      await hostNode(
        toNodeHandler(async () => {
          const body = new ReadableStream<Uint8Array>({
            async start(controller) {
              controller.enqueue(encoder.encode('first;'));
              await secondChunkAllowed;
              controller.enqueue(encoder.encode('second'));
              controller.close();
            },
          });
          return new Response(body, { headers: { 'content-type': 'text/plain', 'x-kind': 'stream' } });
        }),
      ),
    );
    const response = await fetch(app.url);
    expect(response.headers.get('x-kind')).toBe('stream');
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    // The first chunk arrives while the handler still holds the second back.
    expect(decoder.decode((await reader.read()).value)).toBe('first;');
    release();
    let rest = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += decoder.decode(value);
    }
    expect(rest).toBe('second');
  });

  it("aborts the request's signal and cancels the body when the client goes away", async () => {
    let signal: AbortSignal | undefined;
    let cancelled: (reason: unknown) => void = () => {};
    const bodyCancelled = new Promise<unknown>((resolve) => {
      cancelled = resolve;
    });
    const app = track(
      await hostNode(
        toNodeHandler(async (request) => {
          signal = request.signal;
          const body = new ReadableStream<Uint8Array>({
            start(controller) {
              controller.enqueue(new TextEncoder().encode('data: 1\n\n'));
            },
            cancel: (reason) => cancelled(reason),
          });
          return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
        }),
      ),
    );
    const client = new AbortController();
    const response = await fetch(app.url, { signal: client.signal });
    await (response.body as ReadableStream<Uint8Array>).getReader().read();
    client.abort();
    await bodyCancelled;
    await expect.poll(() => signal?.aborted).toBe(true);
  });

  it('answers 500 INTERNAL_ERROR and reports when the handler throws', async () => {
    const reported: unknown[] = [];
    const app = track(
      await hostNode(
        toNodeHandler(
          async () => {
            throw new Error('boom');
          },
          { onError: (error) => reported.push(error) },
        ),
      ),
    );
    const answer = await post(app.url, {});
    expect(answer).toMatchObject({ status: 500, body: { code: 'INTERNAL_ERROR' } });
    expect(reported).toEqual([new Error('boom')]);
  });
});

function postRaw(url: string, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
}
