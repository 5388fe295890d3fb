import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createAdaptorServer, type HttpBindings } from '@hono/node-server';
import { serveStatic } from '@hono/node-server/serve-static';
import { isDurableChatError } from 'durable-chat';
import { createChatRouteHandler } from 'durable-chat/server';
import { Hono } from 'hono';
import { createPlaygroundHeadStart, HEAD_START_PATH } from './head-start-route.js';
import { listenFromPort } from './listen-from-port.js';
import { createLocalBackend, mountLocalBackend } from './local-backend.js';
import type { PlaygroundSettings } from './playground-env.js';
import { applyFault, parseFaultName } from './playground-faults.js';
import { StreamBreaker } from './stream-breaker.js';

/** The built app (`vite build`, config in playground/vite.config.ts). */
export const APP_DIR = fileURLToPath(new URL('../../dist', import.meta.url));

export interface RunningPlayground {
  url: string;
  close(): Promise<void>;
}

function errorBody(error: unknown): { error: string; code: string } {
  if (isDurableChatError(error)) return { error: error.message, code: error.code };
  return { error: error instanceof Error ? error.message : 'unexpected failure', code: 'INTERNAL' };
}

/** The URL to print: a wildcard address is reachable as localhost. */
function printableHost(address: AddressInfo): string {
  if (address.address === '0.0.0.0' || address.address === '::') return 'localhost';
  return address.family === 'IPv6' ? `[${address.address}]` : address.address;
}

/**
 * One Node server on one port: the built app, the chat route (the secret key stays on
 * this side), the fault buttons' endpoint and, in local mode, the dev server itself.
 */
export async function startPlayground(settings: PlaygroundSettings): Promise<RunningPlayground> {
  const backend = settings.backend;
  const local =
    backend.kind === 'local' ? createLocalBackend({ bootDelayMs: backend.bootDelayMs }) : undefined;
  const breaker = new StreamBreaker();
  // Lets the page notice a restart (local sessions live in memory and are gone after one).
  const instance = randomUUID();
  const taskIdentifier = backend.kind === 'remote' ? backend.taskIdentifier : (local?.taskIdentifier ?? '');
  // The route reaches the session service server to server; locally that is this very
  // server, known once it listens.
  let selfURL = '';
  let chatRoute: ((request: Request) => Promise<Response>) | undefined;
  const routeFor = () => {
    chatRoute ??= createChatRouteHandler({
      baseURL: backend.kind === 'remote' ? backend.baseURL : selfURL,
      secretKey: backend.kind === 'remote' ? backend.secretKey : (local?.devServer.secretKey ?? ''),
      taskIdentifier,
      // A local playground has no users; a real app checks its own login here.
      authorize: () => true,
    });
    return chatRoute;
  };

  const app = new Hono<{ Bindings: HttpBindings }>();
  app.get('/playground/config', (c) => {
    // Local mode: the origin the browser used (localhost and 127.0.0.1 are different origins).
    const baseURL = backend.kind === 'remote' ? backend.baseURL : new URL(c.req.url).origin;
    const isLocal = local !== undefined;
    return c.json({
      mode: backend.kind,
      baseURL,
      taskIdentifier,
      faults: isLocal,
      headStart: isLocal,
      instance,
    });
  });
  app.post('/api/chat-session', (c) => routeFor()(c.req.raw));
  if (local !== undefined) {
    // Local only: its reply comes from a mock model, which a real deployment's chats must not get.
    const headStart = createPlaygroundHeadStart({
      baseURL: () => selfURL,
      secretKey: local.devServer.secretKey,
      taskIdentifier,
    });
    app.post(HEAD_START_PATH, (c) => headStart(c.req.raw));
  }
  app.post('/playground/faults', async (c) => {
    if (local === undefined)
      return c.json({ error: 'faults need the local dev server', code: 'NOT_FOUND' }, 404);
    try {
      const fault = parseFaultName(await c.req.json().catch(() => undefined));
      return c.json({ ok: true, detail: applyFault(fault, { devServer: local.devServer, breaker }) });
    } catch (error) {
      const invalid = isDurableChatError(error) && error.code === 'INVALID_INPUT';
      if (!invalid) console.error('playground: fault injection failed', error);
      return c.json(errorBody(error), invalid ? 400 : 500);
    }
  });
  if (local !== undefined) mountLocalBackend(app, local, breaker);
  app.use('/*', serveStatic({ root: APP_DIR }));
  // Any other path is the single-page app.
  app.get('*', serveStatic({ root: APP_DIR, path: 'index.html' }));

  const server = createAdaptorServer({ fetch: app.fetch });
  try {
    await listenFromPort(server, {
      port: settings.port,
      host: settings.host,
      strict: settings.strictPort,
      onPortTaken: settings.onPortTaken,
    });
  } catch (error) {
    // Nothing listens, so nothing else would ever release the in-process dev server.
    local?.devServer.dispose();
    throw error;
  }
  const address = server.address() as AddressInfo;
  selfURL = `http://${printableHost(address)}:${address.port}`;

  return {
    url: selfURL,
    async close() {
      breaker.drop();
      const closed = new Promise<void>((resolve, reject) =>
        server.close((error) => (error ? reject(error) : resolve())),
      );
      // Open `.out` long polls would otherwise hold the server for up to a minute.
      if ('closeAllConnections' in server) server.closeAllConnections();
      await closed;
      local?.devServer.dispose();
    },
  };
}
