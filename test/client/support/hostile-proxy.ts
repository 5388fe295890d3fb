import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What the proxy does with one `.out` connection: pass it through with each SSE frame
 * rewritten, or answer it itself (a hostile server or middlebox).
 */
export type OutConnectionScript =
  | { kind: 'rewrite'; frame: (frame: string) => string }
  | { kind: 'answer'; write: (response: ServerResponse) => void };

export interface HostileProxy {
  url: string;
  /** Scripts for the next `.out` connections, in order; later ones pass through untouched. */
  outScripts: OutConnectionScript[];
  outConnections: number;
  close(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return chunks.length === 0 ? undefined : Buffer.concat(chunks).toString('utf8');
}

/** A loopback proxy in front of a real dev server, for wires the dev server never sends. */
export async function startHostileProxy(upstreamUrl: string): Promise<HostileProxy> {
  const proxy: HostileProxy = { url: '', outScripts: [], outConnections: 0, close: async () => {} };
  const server = createServer(async (request, response) => {
    const isOut = request.method === 'GET' && (request.url ?? '').endsWith('/out');
    const script = isOut ? proxy.outScripts.shift() : undefined;
    if (isOut) proxy.outConnections++;
    if (script?.kind === 'answer') return script.write(response);
    const abort = new AbortController();
    response.on('close', () => abort.abort());
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (typeof value === 'string' && name !== 'host' && name !== 'connection') headers.set(name, value);
    }
    let upstream: Response;
    try {
      upstream = await fetch(`${upstreamUrl}${request.url}`, {
        method: request.method,
        headers,
        body: await readBody(request),
        signal: abort.signal,
      });
    } catch {
      response.destroy();
      return;
    }
    const outHeaders: Record<string, string> = {};
    upstream.headers.forEach((value, name) => {
      if (name !== 'content-length' && name !== 'content-encoding' && name !== 'transfer-encoding')
        outHeaders[name] = value;
    });
    response.writeHead(upstream.status, outHeaders);
    if (upstream.body === null) return response.end();
    const decoder = new TextDecoder();
    let pending = '';
    try {
      const reader = upstream.body.getReader();
      for (;;) {
        const { done, value: chunk } = await reader.read();
        if (done) break;
        if (script?.kind !== 'rewrite') {
          response.write(chunk);
          continue;
        }
        pending += decoder.decode(chunk, { stream: true });
        const end = pending.lastIndexOf('\n\n');
        if (end === -1) continue;
        const frames = pending.slice(0, end + 2).split(/(?<=\n\n)/);
        pending = pending.slice(end + 2);
        response.write(frames.map(script.frame).join(''));
      }
      response.end(pending);
    } catch {
      response.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return proxy;
}
