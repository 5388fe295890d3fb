import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type HttpBindings, serve } from '@hono/node-server';
import { createDevServerApp, type DevServerApp } from './app.js';
import {
  type ConnectionLimits,
  closeSilentConnections,
  DEFAULT_CONNECTION_LIMITS,
  serverOptionsFor,
} from './connection-limits.js';
import type { Faults } from './faults.js';
import type { SessionInfo } from './inspect.js';
import type { DevServerOptions } from './options.js';

export interface StartDevServerOptions extends DevServerOptions {
  /** Default 0 (a free port). The CLI defaults to 3030. */
  port?: number;
  /** Default `127.0.0.1`. */
  host?: string;
  /** A connection that sends no byte within this is closed. Default 10000 ms. */
  idleConnectionTimeoutMs?: number;
  /** A request's headers and body must arrive within this (then 408). Default 30000 ms. */
  requestTimeoutMs?: number;
}

export interface DevServer {
  /** Base URL for clients, e.g. `http://127.0.0.1:54321`. */
  readonly url: string;
  readonly port: number;
  readonly secretKey: string;
  readonly faults: Faults;
  /** The in-process app behind the socket. */
  readonly app: DevServerApp;
  inspect(sessionId: string): SessionInfo | undefined;
  /** Cancels the session's live run (no turn-complete; the next append starts a new run). */
  cancelRun(sessionId: string): boolean;
  /**
   * Closes every connection and listens again on the same port. Sessions, logs and live
   * runs are kept unless `keepState: false`: then the app starts anew with the same secret
   * key, empty in memory, or with a `dataDir` as a restarted process would (every session
   * back, no run live; a turn the restart cut ends as a crashed run's does).
   */
  restart(options?: { keepState?: boolean }): Promise<void>;
  close(): Promise<void>;
}

function listen(app: DevServerApp, port: number, host: string, limits: ConnectionLimits): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = serve({
      // An HTTP/1 server (serverOptionsFor): its bindings are always Node's IncomingMessage/ServerResponse.
      fetch: (request, env) => app.app.fetch(request, env as HttpBindings),
      port,
      hostname: host,
      serverOptions: serverOptionsFor(limits),
    }) as Server;
    closeSilentConnections(server, limits);
    server.once('error', reject);
    server.once('listening', () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

function shut(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error === undefined ? resolve() : reject(error)));
    server.closeAllConnections();
  });
}

function formatUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Starts the dev server on a real socket (port 0 picks a free one). */
export async function startDevServer(options: StartDevServerOptions = {}): Promise<DevServer> {
  const host = options.host ?? '127.0.0.1';
  const limits: ConnectionLimits = {
    idleConnectionTimeoutMs:
      options.idleConnectionTimeoutMs ?? DEFAULT_CONNECTION_LIMITS.idleConnectionTimeoutMs,
    requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_CONNECTION_LIMITS.requestTimeoutMs,
  };
  let app = createDevServerApp(options);
  let server = await listen(app, options.port ?? 0, host, limits);
  const port = (server.address() as AddressInfo).port;
  const url = formatUrl(host, port);
  return {
    url,
    port,
    get secretKey() {
      return app.secretKey;
    },
    get faults() {
      return app.faults;
    },
    get app() {
      return app;
    },
    inspect: (sessionId) => app.inspect(sessionId),
    cancelRun: (sessionId) => app.cancelRun(sessionId),
    async restart(restartOptions = {}) {
      await shut(server);
      if (restartOptions.keepState === false) {
        await app.close();
        app = createDevServerApp({ ...options, secretKey: app.secretKey });
      }
      server = await listen(app, port, host, limits);
    },
    async close() {
      await shut(server);
      await app.close();
    },
  };
}
