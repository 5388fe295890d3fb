import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HttpBindings } from '@hono/node-server';
import { Hono } from 'hono';
import { cors } from 'hono/cors';
import type { AnyAgent } from './agents/define-agent.js';
import { demoAgent } from './agents/demo-agent.js';
import type { DevServerContext } from './context.js';
import { createAgentLookup } from './create-agent-lookup.js';
import { Faults } from './faults.js';
import { mountAdminRoutes } from './http/admin-routes.js';
import { mountAppendRoute } from './http/append-route.js';
import { mountOutRoute } from './http/out-route.js';
import { EXPOSED_HEADERS } from './http/responses.js';
import { mountSessionRoutes } from './http/session-routes.js';
import { describeSession, type SessionInfo } from './inspect.js';
import { type DevServerOptions, resolveOptions } from './options.js';
import { resumeTrims } from './runs/out-writer.js';
import { createObjectStore } from './store/object-store.js';
import { SessionRegistry } from './store/session-registry.js';
import { createSessionStorage } from './store/session-storage.js';
import { TokenService } from './tokens.js';

export type DevHono = Hono<{ Bindings: Partial<HttpBindings> }>;

/**
 * The dev server's routes as one handler (a hono app inside). Its public type names no hono
 * type: hono is bundled into the dev server, not installed with the package.
 */
export interface DevServerRoutes {
  /**
   * Answers a request. Pass the Node request and response (`env` of `@hono/node-server`) to
   * let SSE and dropped-connection faults use the socket; without them they degrade in-process.
   */
  fetch(
    request: Request,
    env?: { incoming?: IncomingMessage; outgoing?: ServerResponse },
  ): Response | Promise<Response>;
}

export interface DevServerApp {
  /** The routes as a handler: mount its `fetch` in any server or framework. */
  app: DevServerRoutes;
  /** A plain `fetch` handler, usable in-process without a socket. */
  fetch: (request: Request) => Response | Promise<Response>;
  secretKey: string;
  faults: Faults;
  /** A session's row, run state and log sizes (friendly id or `externalId`). */
  inspect(sessionId: string): SessionInfo | undefined;
  /**
   * Cancels the session's live run, as the platform's cancel would: no turn-complete for a
   * turn in progress; the next append starts a continuation. False when no run is live.
   */
  cancelRun(sessionId: string): boolean;
  /**
   * Stops every run and timer, and forgets every session. With a `dataDir`, what the runs do
   * after this is not kept (a restart finds them as a crash leaves them).
   */
  dispose(): void;
  /** `dispose`, then settles once the data folder holds everything kept and is released. */
  close(): Promise<void>;
  /** @internal */
  context: DevServerContext;
}

function agentMap(agents: AnyAgent[]): Map<string, AnyAgent> {
  const map = new Map<string, AnyAgent>();
  for (const agent of agents) map.set(agent.id, agent);
  return map;
}

/**
 * The dev server as an app, without listening: every route; state in memory, or kept in
 * `dataDir` (the sessions found there are served again; the folder is locked until `close`).
 */
export function createDevServerApp(options: DevServerOptions = {}): DevServerApp {
  const resolved = resolveOptions(options, [demoAgent as AnyAgent]);
  const tokens = new TokenService(resolved.secretKey, resolved.tokenTtlSeconds, resolved.clock);
  const trim = { delayMs: resolved.trimDelayMs };
  const agents = agentMap(resolved.agents);
  const context: DevServerContext = {
    options: resolved,
    agents,
    agentFor: createAgentLookup(agents, resolved.defaultAgent, resolved.logger),
    sessions: new SessionRegistry(createSessionStorage(resolved.dataDir, resolved.logger)),
    tokens,
    faults: new Faults(tokens, trim, resolved.wire),
    objectStore: createObjectStore(resolved.objectStore),
    trim,
    logger: resolved.logger,
    streams: new Set(),
  };
  context.sessions.recover(context.agentFor);
  for (const session of context.sessions.all()) resumeTrims(context, session);
  const app: DevHono = new Hono();
  app.use(
    '*',
    cors({
      origin: '*',
      allowHeaders: [
        'authorization',
        'content-type',
        'x-part-id',
        'last-event-id',
        'timeout-seconds',
        'x-peek-settled',
        'accept',
      ],
      allowMethods: ['GET', 'POST', 'OPTIONS'],
      exposeHeaders: EXPOSED_HEADERS,
    }),
  );
  mountSessionRoutes(app, context);
  mountAppendRoute(app, context);
  mountOutRoute(app, context);
  mountAdminRoutes(app, context);
  app.notFound((c) =>
    c.json({ error: `no route for ${c.req.method} ${c.req.path}`, code: 'NOT_FOUND' }, 404),
  );
  app.onError((error, c) => {
    context.logger.warn(`${c.req.method} ${c.req.path} failed`, error);
    const body = c.req.path.endsWith('/in/append')
      ? { ok: false, error: 'internal error on the durable stream' }
      : { error: 'internal error', code: 'SERVER_ERROR' };
    return c.json(body, 500);
  });
  let closing: Promise<void> | undefined;
  const dispose = () => {
    for (const stream of [...context.streams]) stream.end();
    // Snapshots stop first (and finish what is under way) while the folder is still this
    // server's; then the sessions stop keeping records and the folder is released.
    const snapshots = context.objectStore.close?.() ?? Promise.resolve();
    closing ??= snapshots.then(() => context.sessions.close());
  };
  return {
    app,
    fetch: (request) => app.fetch(request, {}),
    secretKey: resolved.secretKey,
    faults: context.faults,
    inspect(sessionId) {
      const session = context.sessions.resolve(sessionId);
      return session === undefined ? undefined : describeSession(session);
    },
    cancelRun(sessionId) {
      const run = context.sessions.resolve(sessionId)?.run;
      if (run === null || run === undefined) return false;
      run.terminate('cancel');
      return true;
    },
    dispose,
    close() {
      dispose();
      return closing ?? Promise.resolve();
    },
    context,
  };
}
