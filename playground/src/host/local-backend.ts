import type { HttpBindings } from '@hono/node-server';
import { createDevServerApp, type DevServerApp, demoAgent } from 'durable-chat/dev-server';
import type { Hono } from 'hono';
import type { StreamBreaker } from './stream-breaker.js';

export interface LocalBackend {
  devServer: DevServerApp;
  taskIdentifier: string;
}

/** The dev server with the demo agent, in this process (snapshots in memory). */
export function createLocalBackend(options: { bootDelayMs?: number } = {}): LocalBackend {
  const devServer = createDevServerApp({ agents: [demoAgent], bootDelayMs: options.bootDelayMs });
  return { devServer, taskIdentifier: demoAgent.id };
}

/**
 * Serves the dev server's session API from the playground's own origin, so the browser
 * needs no CORS and the visitor a single URL. `.out` responses are tracked by the breaker,
 * so the "drop connection" button can cut them.
 */
export function mountLocalBackend(
  app: Hono<{ Bindings: HttpBindings }>,
  backend: LocalBackend,
  breaker: StreamBreaker,
): void {
  const devApp = backend.devServer.app;
  app.get('/realtime/v1/sessions/:id/out', (c) => {
    // The dev server writes SSE straight to the Node response; the breaker can cut it.
    breaker.track(c.env.outgoing);
    return devApp.fetch(c.req.raw, c.env);
  });
  app.all('/realtime/v1/*', (c) => devApp.fetch(c.req.raw, c.env));
  app.all('/api/v1/*', (c) => devApp.fetch(c.req.raw, c.env));
}
