import { createServer } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type DevServer, echoAgent, startDevServer } from '../../src/dev-server/index.js';
import { createRouteSessionCallbacks } from '../../src/route-client/create-route-session-callbacks.js';
import { type ChatRouteHandlerOptions, createChatRouteHandler } from '../../src/server/chat-route-handler.js';
import { failure } from './support/failure.js';
import { hostFetchHandler, type Listening, listen } from './support/listen.js';

// Issue 21 item 5: route failures that are the operator's to fix reach the browser with their
// own code and leave one line in the server's log (the default onError) that names the fix.

let server: DevServer;
const open: Listening[] = [];
beforeAll(async () => {
  server = await startDevServer({ port: 0, agents: [echoAgent], logger: { warn() {} } });
});
afterAll(async () => {
  await Promise.all(open.map((listening) => listening.close()));
  await server?.close();
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** The route with the default onError, its console.error lines captured. */
async function route(overrides: Partial<ChatRouteHandlerOptions>) {
  const logged: string[] = [];
  vi.spyOn(console, 'error').mockImplementation((line: unknown) => {
    logged.push(String(line));
  });
  const listening = await hostFetchHandler(
    createChatRouteHandler({
      baseURL: server.url,
      secretKey: server.secretKey,
      taskIdentifier: 'echo',
      authorize: () => true,
      ...overrides,
    }),
  );
  open.push(listening);
  return { callbacks: createRouteSessionCallbacks({ endpoint: listening.url }), logged };
}

/** A loopback port nothing listens on (bound, then closed). */
async function deadAddress(): Promise<string> {
  const listening = await listen(createServer());
  await listening.close();
  return listening.url;
}

describe('route failures that are the operator’s to fix', () => {
  it('an unset secret key (the README’s `?? ""`) is INVALID_CONFIG in the browser, not retryable, and the log names the variable', async () => {
    const { callbacks, logged } = await route({ secretKey: '' });
    const error = await failure(callbacks.startSession({ chatId: 'unset-key' }));
    expect(error).toMatchObject({
      name: 'ConfigurationError',
      code: 'INVALID_CONFIG',
      status: 500,
      retryable: false,
    });
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(/INVALID_CONFIG: createChatRouteHandler: secretKey: .*TRIGGER_SECRET_KEY/);
  });

  it('a session service that does not answer: the log says where it looked and asks whether it runs; the browser may retry', async () => {
    const baseURL = await deadAddress();
    const { callbacks, logged } = await route({ baseURL });
    const error = await failure(callbacks.startSession({ chatId: 'no-service' }));
    expect(error).toMatchObject({ code: 'SERVER_ERROR', serverCode: 'UPSTREAM_ERROR', retryable: true });
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain(`the session service at ${baseURL} did not answer`);
    expect(logged[0]).toMatch(/ECONNREFUSED/);
    expect(logged[0]).toContain('npx durable-chat dev');
  });

  it('a secret key in a cause is redacted from the log line', async () => {
    const baseURL = await deadAddress();
    const { callbacks, logged } = await route({ baseURL: `${baseURL}/${server.secretKey}` });
    await failure(callbacks.startSession({ chatId: 'redacted' }));
    expect(logged.join('\n')).not.toContain(server.secretKey);
  });
});
