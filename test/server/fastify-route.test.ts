import Fastify, { type FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { type ChatRouteHandlerOptions, createChatRouteHandler } from '../../src/server/chat-route-handler.js';
import { createNodeChatRouteHandler, toNodeHandler } from '../../src/server/node-handler.js';
import { closeAfterEach, type Listening } from './support/listen.js';
import {
  defineRouteHostCases,
  postChunked,
  postText,
  routeDevServerPerFile,
} from './support/route-lifecycle.js';

// The Node route adapter mounted in a real Fastify 5 app, exactly as docs/server.md shows it,
// against the dev server over loopback.

const { devServer: server, newChatId, routeOptions } = routeDevServerPerFile('fastify');
const track = closeAfterEach();

type BodyParsing = 'the route reads the body' | 'Fastify parses the body';

/** The docs' Fastify recipes: the route in a scope that leaves bodies unread, or Fastify's parsed body handed on. */
function mountRoute(fastify: FastifyInstance, parsing: BodyParsing, options: ChatRouteHandlerOptions): void {
  const chatRoute = createNodeChatRouteHandler(options);
  if (parsing === 'the route reads the body') {
    fastify.register(async (scope) => {
      // Only in this scope: bodies stay unread for the route to read.
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
      scope.post('/api/chat-session', async (request, reply) => {
        reply.hijack(); // the route writes the answer itself
        await chatRoute(request.raw, reply.raw);
      });
    });
  } else {
    fastify.post('/api/chat-session', async (request, reply) => {
      reply.hijack();
      await chatRoute(Object.assign(request.raw, { body: request.body }), reply.raw);
    });
  }
}

async function hostFastify(parsing: BodyParsing, options: ChatRouteHandlerOptions): Promise<string> {
  const app = Fastify();
  mountRoute(app, parsing, options);
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  const listening: Listening = { url: address, close: () => app.close() };
  track(listening);
  return `${address}/api/chat-session`;
}

describe.each<BodyParsing>(['the route reads the body', 'Fastify parses the body'])(
  'the chat route in Fastify 5 (%s)',
  (parsing) => {
    defineRouteHostCases({
      host: (options) => hostFastify(parsing, options),
      routeOptions,
      devServer: server,
      newChatId,
      notJson: { body: '{"action":"start"}', contentType: 'text/plain', label: 'a text body' },
    });
  },
);

describe('the chat route in Fastify 5: the body the route reads itself', () => {
  it('is refused with 413 as soon as an endless chunked body passes the limit', async () => {
    const endpoint = await hostFastify('the route reads the body', routeOptions({ maxBodyBytes: 4096 }));
    const answer = await postChunked(endpoint, 64 * 1024 * 1024);
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.text)).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
  });

  it('answers 400 INVALID_INPUT for malformed JSON, and 415 for a form', async () => {
    const endpoint = await hostFastify('the route reads the body', routeOptions());
    const malformed = await postText(endpoint, '{"action":');
    expect(malformed.status).toBe(400);
    expect(JSON.parse(malformed.text)).toMatchObject({ code: 'INVALID_INPUT' });
    const form = await postText(endpoint, 'action=start', 'application/x-www-form-urlencoded');
    expect(form.status).toBe(415);
    expect(JSON.parse(form.text)).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE' });
  });
});

describe("the chat route in Fastify 5: what Fastify's own parsing answers before the route runs", () => {
  // Documented in docs/server.md: these never reach the route, so they are Fastify's answers.
  it("malformed JSON is Fastify's 400, a form its 415", async () => {
    const endpoint = await hostFastify('Fastify parses the body', routeOptions());
    const malformed = await postText(endpoint, '{"action":');
    expect(malformed.status).toBe(400);
    expect(JSON.parse(malformed.text)).toMatchObject({ code: 'FST_ERR_CTP_INVALID_JSON_BODY' });
    const form = await postText(endpoint, 'action=start', 'application/x-www-form-urlencoded');
    expect(form.status).toBe(415);
    expect(JSON.parse(form.text)).toMatchObject({ code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' });
  });
});

describe('the chat route in Fastify 5: a body Fastify read but did not hand on', () => {
  it('answers 500 INVALID_CONFIG at once and logs why, instead of waiting for a body that never comes', async () => {
    const errors: unknown[] = [];
    // `toNodeHandler` is what `createNodeChatRouteHandler` wraps; its `onError` sees the adapter's own failures.
    const chatRoute = toNodeHandler(createChatRouteHandler(routeOptions()), {
      onError: (error) => errors.push(error),
    });
    const app = Fastify();
    // The mistake: Fastify's JSON parser read the stream, and only `request.raw` is passed.
    app.post('/api/chat-session', async (request, reply) => {
      reply.hijack();
      await chatRoute(request.raw, reply.raw);
    });
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    track({ url: address, close: () => app.close() });
    const answer = await postText(
      `${address}/api/chat-session`,
      JSON.stringify({ action: 'start', chatId: 'c' }),
    );
    expect(answer.status).toBe(500);
    expect(JSON.parse(answer.text)).toMatchObject({ code: 'INVALID_CONFIG' });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'INVALID_CONFIG', field: 'req.body', retryable: false });
    expect(String(errors[0])).toMatch(/already read/);
  });
});
