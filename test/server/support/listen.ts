import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { afterEach } from 'vitest';

export interface Listening {
  url: string;
  close(): Promise<void>;
}

/** Listens on a loopback port chosen by the OS. */
export async function listen(server: Server): Promise<Listening> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  // Closing twice is harmless, so a test may close early and `closeAfterEach` still run.
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => {
      closing ??= new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      });
      return closing;
    },
  };
}

/** Returns `track`: each server passed to it is closed after the current test. */
export function closeAfterEach(): <T extends Listening>(server: T) => T {
  const open: Listening[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((server) => server.close()));
  });
  return (server) => {
    open.push(server);
    return server;
  };
}

/** Hosts a Fetch-API handler on a real `http.createServer`, as Node apps do. */
export function hostFetchHandler(handler: (request: Request) => Promise<Response>): Promise<Listening> {
  return listen(createServer(getRequestListener(handler)));
}

export interface RecordedRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  body: unknown;
}

export type Reply = (request: RecordedRequest, response: ServerResponse) => void;

/**
 * A session-service stand-in that answers from a queue of replies (the last one repeats)
 * and records every request, for failures the dev server does not produce on demand.
 */
export async function startScriptedUpstream(
  replies: Reply[],
): Promise<Listening & { requests: RecordedRequest[] }> {
  const requests: RecordedRequest[] = [];
  const server = createServer((incoming: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const recorded: RecordedRequest = {
        method: incoming.method ?? '',
        path: incoming.url ?? '',
        authorization: incoming.headers.authorization,
        body: text === '' ? undefined : JSON.parse(text),
      };
      requests.push(recorded);
      const reply = replies[Math.min(requests.length - 1, replies.length - 1)];
      if (reply === undefined) throw new Error('startScriptedUpstream needs at least one reply');
      reply(recorded, response);
    });
  });
  return { ...(await listen(server)), requests };
}

export function replyJson(status: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return (_request, response) => {
    response.writeHead(status, { 'content-type': 'application/json', ...headers });
    response.end(JSON.stringify(body));
  };
}

/** Destroys the socket without an answer: the client sees a network failure. */
export const replyDrop: Reply = (_request, response) => {
  response.socket?.destroy();
};

/** A plausible create answer, for tests that only need the service to say yes. */
export function createdSession(externalId: string, isCached = false): Record<string, unknown> {
  return {
    id: `session_${externalId}`,
    externalId,
    type: 'chat.agent',
    runId: 'run_1',
    currentRunId: 'run_1',
    publicAccessToken: `token-for-${externalId}`,
    isCached,
  };
}
