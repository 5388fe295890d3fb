import type { Server, ServerOptions } from 'node:http';

export interface ConnectionLimits {
  /** A connection that has sent no byte within this is closed. */
  idleConnectionTimeoutMs: number;
  /** Headers and body of one request must arrive within this (408 otherwise). */
  requestTimeoutMs: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  idleConnectionTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
};

/**
 * Node's own request deadlines, checked every second (its default check runs every 30 s).
 * They start with the first byte of a request, so the silent connection is handled apart.
 */
export function serverOptionsFor(limits: ConnectionLimits): ServerOptions {
  return {
    requestTimeout: limits.requestTimeoutMs,
    headersTimeout: Math.min(limits.requestTimeoutMs, 10_000),
    connectionsCheckingInterval: Math.min(1000, limits.requestTimeoutMs),
  };
}

/** Closes connections that never send a byte, which Node's request deadlines never see. */
export function closeSilentConnections(server: Server, limits: ConnectionLimits): void {
  server.on('connection', (socket) => {
    const timer = setTimeout(() => socket.destroy(), limits.idleConnectionTimeoutMs);
    timer.unref();
    const clear = () => clearTimeout(timer);
    socket.once('data', clear);
    socket.once('close', clear);
  });
}
