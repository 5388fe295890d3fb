import { createServer } from 'node:http';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { type ChatRouteHandlerOptions, createChatRouteHandler } from '../../src/server/chat-route-handler.js';
import { createNodeChatRouteHandler, toNodeHandler } from '../../src/server/node-handler.js';
import { closeAfterEach, type Listening, listen } from './support/listen.js';
import {
  defineRouteHostCases,
  expectFullLifecycle,
  postChunked,
  postText,
  routeDevServerPerFile,
} from './support/route-lifecycle.js';

// The Node route adapter mounted in a real Express 5 app, exactly as docs/server.md shows it,
// against the dev server over loopback.

const { devServer: server, newChatId, routeOptions } = routeDevServerPerFile('express');
const track = closeAfterEach();

type BodyParsing = 'the route reads the body' | 'express.json() first';

/** The docs' Express recipe; `express.json()` in front of everything when asked. */
async function hostExpress(parsing: BodyParsing, options: ChatRouteHandlerOptions): Promise<string> {
  const chatRoute = createNodeChatRouteHandler(options);
  const app = express();
  if (parsing === 'express.json() first') app.use(express.json()); // optional: the route takes the parsed body as it is
  app.post('/api/chat-session', (req, res) => void chatRoute(req, res));
  const listening: Listening = track(await listen(createServer(app)));
  return `${listening.url}/api/chat-session`;
}

describe.each<BodyParsing>(['the route reads the body', 'express.json() first'])(
  'the chat route in Express 5 (%s)',
  (parsing) => {
    defineRouteHostCases({
      host: (options) => hostExpress(parsing, options),
      routeOptions,
      devServer: server,
      newChatId,
      notJson: {
        body: 'action=start',
        contentType: 'application/x-www-form-urlencoded',
        label: 'a body that is not JSON',
      },
    });
  },
);

describe('the chat route in Express 5: mounted on a router', () => {
  it("the Request carries the URL the browser called, not the router's remainder", async () => {
    const seenPaths: string[] = [];
    const chatRoute = createNodeChatRouteHandler(
      routeOptions({
        authorize: (request) => {
          seenPaths.push(new URL(request.url).pathname);
          return true;
        },
      }),
    );
    const router = express.Router();
    router.post('/chat-session', (req, res) => void chatRoute(req, res));
    const app = express();
    app.use('/api', router);
    const listening = track(await listen(createServer(app)));
    await expectFullLifecycle(`${listening.url}/api/chat-session`, server(), newChatId());
    expect(new Set(seenPaths)).toEqual(new Set(['/api/chat-session']));
  });
});

describe('the chat route in Express 5: the body the route reads itself', () => {
  it('is refused with 413 as soon as an endless chunked body passes the limit', async () => {
    const endpoint = await hostExpress('the route reads the body', routeOptions({ maxBodyBytes: 4096 }));
    const answer = await postChunked(endpoint, 64 * 1024 * 1024);
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.text)).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
  });

  it('answers 400 INVALID_INPUT for malformed JSON', async () => {
    const endpoint = await hostExpress('the route reads the body', routeOptions());
    const answer = await postText(endpoint, '{"action":');
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toMatchObject({ code: 'INVALID_INPUT' });
  });
});

describe('the chat route in Express 5: what express.json() answers before the route runs', () => {
  // Documented in docs/server.md: these never reach the route, so they are Express's answers.
  it('malformed JSON is a 400 from Express, not a JSON error of the route', async () => {
    const endpoint = await hostExpress('express.json() first', routeOptions());
    const answer = await postText(endpoint, '{"action":');
    expect(answer.status).toBe(400);
    expect(answer.contentType).toMatch(/^text\/html/);
  });

  it("a body over express.json()'s own limit (100 kB) is a 413 from Express", async () => {
    const endpoint = await hostExpress('express.json() first', routeOptions({ maxBodyBytes: 1024 * 1024 }));
    const body = JSON.stringify({ action: 'start', chatId: newChatId(), clientData: 'x'.repeat(200_000) });
    const answer = await postText(endpoint, body);
    expect(answer.status).toBe(413);
    expect(answer.contentType).toMatch(/^text\/html/);
  });
});

describe('the chat route in Express 5: a body an earlier middleware read and did not hand on', () => {
  it('answers 500 INVALID_CONFIG at once instead of waiting for a body that never comes', async () => {
    const errors: unknown[] = [];
    const chatRoute = toNodeHandler(createChatRouteHandler(routeOptions()), {
      onError: (error) => errors.push(error),
    });
    const app = express();
    // The mistake: a middleware drains the request (to log or sign it) and keeps what it read.
    app.use((req, _res, next) => {
      req.on('data', () => {});
      req.on('end', () => next());
    });
    app.post('/api/chat-session', (req, res) => void chatRoute(req, res));
    const listening = track(await listen(createServer(app)));
    const answer = await postText(
      `${listening.url}/api/chat-session`,
      JSON.stringify({ action: 'start', chatId: 'c' }),
    );
    expect(answer.status).toBe(500);
    expect(JSON.parse(answer.text)).toMatchObject({ code: 'INVALID_CONFIG' });
    expect(errors).toEqual([expect.objectContaining({ code: 'INVALID_CONFIG', field: 'req.body' })]);
  });
});
