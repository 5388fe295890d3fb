import { afterAll, beforeAll } from 'vitest';
import { type DevServer, echoAgent, startDevServer } from '../../../src/dev-server/index.js';
import { createChatRouteHandler } from '../../../src/server/chat-route-handler.js';
import { hostFetchHandler, type Listening } from './listen.js';

export interface EchoRoute {
  /** The dev server behind the route (its `inspect`, `cancelRun`, secret key). */
  readonly server: DevServer;
  /** The chat route's URL, over loopback. */
  readonly url: string;
}

/**
 * A dev server running the echo agent and a `createChatRouteHandler` in front of it, for the
 * whole test file: started before its tests, closed after them.
 */
export function echoRouteForFile(): EchoRoute {
  let server: DevServer | undefined;
  let route: Listening | undefined;
  beforeAll(async () => {
    server = await startDevServer({ port: 0, agents: [echoAgent], logger: { warn() {} } });
    route = await hostFetchHandler(
      createChatRouteHandler({
        baseURL: server.url,
        secretKey: server.secretKey,
        taskIdentifier: 'echo',
        authorize: () => true,
        onError: () => {},
      }),
    );
  });
  afterAll(async () => {
    await route?.close();
    await server?.close();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('echoRouteForFile: read before beforeAll ran');
    return value;
  };
  return {
    get server() {
      return started(server);
    },
    get url() {
      return started(route).url;
    },
  };
}

/** POSTs a JSON body to the chat route: its status and JSON answer. */
export async function postRoute(
  url: string,
  body: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}
