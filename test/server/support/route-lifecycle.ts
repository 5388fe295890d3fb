import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type DevServer, echoAgent, startDevServer } from '../../../src/dev-server/index.js';
import { readTokenClaims } from '../../../src/protocol/token-claims.js';
import { createRouteSessionCallbacks } from '../../../src/route-client/create-route-session-callbacks.js';
import type { ChatRouteHandlerOptions } from '../../../src/server/chat-route-handler.js';
import { appendWithToken } from './session-service.js';

// What every host of the Node route adapter (Express, Fastify) is checked for, through the
// browser's own callbacks and plain HTTP, against the dev server over loopback.

/**
 * start → the token appends to `.in`; token refresh; a watch token that reads but cannot
 * append; close → a later start is refused as closed.
 */
export async function expectFullLifecycle(
  endpoint: string,
  devServer: DevServer,
  chatId: string,
): Promise<void> {
  const callbacks = createRouteSessionCallbacks({ endpoint });
  const started = await callbacks.startSession({ chatId, clientData: { plan: 'pro' } });
  expect(started.sessionId).toMatch(/^session_/);
  expect(started.isCached).toBe(false);
  expect((await appendWithToken(devServer.url, chatId, started.publicAccessToken)).status).toBe(200);

  const refreshed = await callbacks.getAccessToken({ chatId });
  expect(readTokenClaims(refreshed)?.scopes).toContain(`write:sessions:${chatId}`);
  expect((await appendWithToken(devServer.url, chatId, refreshed)).status).toBe(200);

  const watchToken = await callbacks.getWatchToken({ chatId });
  expect(readTokenClaims(watchToken)?.scopes).toEqual([`read:sessions:${chatId}:out`]);
  const out = await fetch(`${devServer.url}/realtime/v1/sessions/${chatId}/out`, {
    headers: { authorization: `Bearer ${watchToken}`, accept: 'text/event-stream', 'timeout-seconds': '1' },
  });
  expect(out.status).toBe(200);
  await out.body?.cancel();
  expect((await appendWithToken(devServer.url, chatId, watchToken)).status).toBe(403);

  await callbacks.closeSession({ chatId, reason: 'done' });
  await expect(callbacks.startSession({ chatId })).rejects.toMatchObject({ code: 'SESSION_CLOSED' });
}

export interface Answer {
  status: number;
  contentType: string | null;
  text: string;
}

export async function postText(url: string, body: string, contentType = 'application/json'): Promise<Answer> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': contentType }, body });
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    text: await response.text(),
  };
}

/** Sends `total` bytes in 16 KiB chunks without a Content-Length; resolves with the answer. */
export function postChunked(url: string, total: number): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/json' } });
    request.on('response', (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => {
        text += chunk.toString();
      });
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          contentType: response.headers['content-type'] ?? null,
          text,
        }),
      );
    });
    // The server may cut the connection after answering, while the body is still going out.
    request.on('error', (error) => {
      if (!request.destroyed) reject(error);
    });
    const chunk = Buffer.alloc(16 * 1024, 'a');
    let sent = 0;
    const pump = () => {
      while (sent < total) {
        sent += chunk.length;
        if (!request.write(chunk)) return void request.once('drain', pump);
      }
      request.end();
    };
    pump();
  });
}

/**
 * A `fetch` for the route's session-service calls that holds the create of one chat until
 * its signal aborts, so a test can leave mid-request and see the upstream call stop.
 */
export function upstreamHoldingCreate(heldChatId: string) {
  let entered: () => void = () => {};
  let aborted: () => void = () => {};
  const held = {
    entered: new Promise<void>((resolve) => {
      entered = resolve;
    }),
    aborted: new Promise<void>((resolve) => {
      aborted = resolve;
    }),
  };
  const holdingFetch: typeof fetch = async (input, init) => {
    const body = typeof init?.body === 'string' ? init.body : '';
    if (!body.includes(`"externalId":${JSON.stringify(heldChatId)}`)) return fetch(input, init);
    entered();
    const signal = init?.signal;
    return new Promise<Response>((_resolve, reject) => {
      const onAbort = () => {
        aborted();
        reject(signal?.reason);
      };
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
    });
  };
  return { fetch: holdingFetch, ...held };
}

/** Starts `chatId` through the route and leaves (aborts) as soon as the upstream create began. */
export async function leaveMidStart(endpoint: string, chatId: string, entered: Promise<void>): Promise<void> {
  const client = new AbortController();
  const sent = fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ action: 'start', chatId }),
    signal: client.signal,
  });
  await entered;
  client.abort();
  await expect(sent).rejects.toMatchObject({ name: 'AbortError' });
}

/**
 * What every framework host of the route must answer as the route itself does: the full
 * lifecycle, 413, 400, 415, and a client leaving mid-request. `host` mounts the route with the
 * given options and returns its URL; `notJson` is a body the framework lets through to the route.
 */
export function defineRouteHostCases(options: {
  host: (options: ChatRouteHandlerOptions) => Promise<string>;
  routeOptions: (extra?: Partial<ChatRouteHandlerOptions>) => ChatRouteHandlerOptions;
  devServer: () => DevServer;
  newChatId: () => string;
  notJson: { body: string; contentType: string; label: string };
}): void {
  const { host, routeOptions, devServer, newChatId, notJson } = options;
  it('starts, refreshes the token, hands out a watch token and closes', async () => {
    const endpoint = await host(routeOptions());
    await expectFullLifecycle(endpoint, devServer(), newChatId());
  });

  it('answers 413 PAYLOAD_TOO_LARGE over maxBodyBytes', async () => {
    const endpoint = await host(routeOptions({ maxBodyBytes: 4096 }));
    const body = JSON.stringify({ action: 'start', chatId: newChatId(), clientData: 'x'.repeat(5000) });
    const answer = await postText(endpoint, body);
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.text)).toEqual({
      code: 'PAYLOAD_TOO_LARGE',
      error: 'the body is over 4096 bytes',
    });
  });

  it('answers 400 INVALID_INPUT for a request the route does not know', async () => {
    const endpoint = await host(routeOptions());
    const answer = await postText(endpoint, JSON.stringify({ action: 'fly', chatId: newChatId() }));
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toMatchObject({ code: 'INVALID_INPUT' });
  });

  it(`answers 415 for ${notJson.label}`, async () => {
    const endpoint = await host(routeOptions());
    const answer = await postText(endpoint, notJson.body, notJson.contentType);
    expect(answer.status).toBe(415);
    expect(JSON.parse(answer.text)).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE' });
  });

  it("stops the session service's call when the client leaves mid-request, and serves the next one", async () => {
    const chatId = newChatId();
    const upstream = upstreamHoldingCreate(chatId);
    const errors: unknown[] = [];
    const endpoint = await host(
      routeOptions({ fetch: upstream.fetch, onError: (error) => errors.push(error) }),
    );
    await leaveMidStart(endpoint, chatId, upstream.entered);
    await upstream.aborted;
    await expectFullLifecycle(endpoint, devServer(), newChatId());
    // Nobody was left to answer and nothing is the operator's to fix.
    expect(errors).toEqual([]);
  });
}

/** A dev server with the echo agent for one test file, and the route's options against it. */
export function routeDevServerPerFile(prefix: string) {
  let devServer: DevServer | undefined;
  let counter = 0;
  beforeAll(async () => {
    devServer = await startDevServer({ port: 0, agents: [echoAgent], logger: { warn() {} } });
  });
  afterAll(async () => {
    await devServer?.close();
  });
  const server = (): DevServer => {
    if (devServer === undefined) throw new Error('the dev server has not started');
    return devServer;
  };
  return {
    devServer: server,
    newChatId: () => `${prefix}-${Date.now()}-${++counter}`,
    routeOptions: (extra: Partial<ChatRouteHandlerOptions> = {}): ChatRouteHandlerOptions => ({
      baseURL: server().url,
      secretKey: server().secretKey,
      taskIdentifier: 'echo',
      authorize: () => true,
      onError: () => {},
      ...extra,
    }),
  };
}
