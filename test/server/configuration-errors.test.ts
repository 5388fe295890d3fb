import type { UIMessage, UIMessageChunk } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DevServer, echoAgent, startDevServer } from '../../src/dev-server/index.js';
import type { DurableChatError } from '../../src/errors/durable-chat-error.js';
import { createRouteSessionCallbacks } from '../../src/route-client/create-route-session-callbacks.js';
import { type ChatRouteHandlerOptions, createChatRouteHandler } from '../../src/server/chat-route-handler.js';
import { SessionChatTransport } from '../../src/transport/index.js';
import { failure } from './support/failure.js';
import { hostFetchHandler, type Listening } from './support/listen.js';

// A misconfigured app, end to end: browser callbacks → route → dev server over loopback. Each
// case must reach the browser with its own code, not retryable, and reach the server's log
// with the fix.

let server: DevServer;
const open: Listening[] = [];
beforeAll(async () => {
  server = await startDevServer({ port: 0, agents: [echoAgent], logger: { warn() {} } });
});
afterAll(async () => {
  await Promise.all(open.map((listening) => listening.close()));
  await server?.close();
});

async function route(overrides: Partial<ChatRouteHandlerOptions>) {
  const reported: DurableChatError[] = [];
  const listening = await hostFetchHandler(
    createChatRouteHandler({
      baseURL: server.url,
      secretKey: server.secretKey,
      taskIdentifier: 'echo',
      authorize: () => true,
      onError: (error) => reported.push(error as DurableChatError),
      ...overrides,
    }),
  );
  open.push(listening);
  return { callbacks: createRouteSessionCallbacks({ endpoint: listening.url }), reported };
}

/** The error a send ends with, whether `sendMessages` rejects or its stream errors. */
async function sendError(transport: SessionChatTransport): Promise<unknown> {
  const message: UIMessage = { id: 'm1', role: 'user', parts: [{ type: 'text', text: 'hi' }] };
  try {
    const stream: ReadableStream<UIMessageChunk> = await transport.sendMessages({
      chatId: 'config-chat',
      messages: [message],
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: undefined,
    });
    const reader = stream.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return undefined;
      if (value.type === 'error') return value.errorText;
    }
  } catch (error) {
    return error;
  }
}

describe('a misconfigured chat route', () => {
  it('with a wrong secret key: SECRET_KEY_REJECTED in the browser, the fix in the server log', async () => {
    const wrongKey = 'sk_dev_not_this_servers_key';
    const { callbacks, reported } = await route({ secretKey: wrongKey });
    const error = await failure(callbacks.startSession({ chatId: 'key-chat' }));
    expect(error).toMatchObject({
      name: 'ConfigurationError',
      code: 'SECRET_KEY_REJECTED',
      retryable: false,
    });
    expect(error.message).toContain("the session service rejected this route's secret key");
    expect(reported).toHaveLength(1);
    expect(reported[0]).toMatchObject({ code: 'SECRET_KEY_REJECTED', field: 'secretKey' });
    expect(reported[0]?.message).toContain(`the session service at ${server.url} rejected the secret key`);
    expect(reported[0]?.message).toContain('.durable-chat/secret-key');
    expect(reported[0]?.message).not.toContain(wrongKey);
  });

  it('with a task the service does not serve: TASK_NOT_FOUND, the task named in the server log', async () => {
    const { callbacks, reported } = await route({ taskIdentifier: 'support-agent' });
    const error = await failure(callbacks.getAccessToken({ chatId: 'task-chat' }));
    expect(error).toMatchObject({ name: 'ConfigurationError', code: 'TASK_NOT_FOUND', retryable: false });
    expect(reported).toHaveLength(1);
    expect(reported[0]?.message).toContain('has no task "support-agent"');
    expect(reported[0]?.message).toContain('Set taskIdentifier');
  });

  it("hands the route's code to the transport's error", async () => {
    const { callbacks } = await route({ secretKey: 'sk_dev_wrong_again' });
    const transport = new SessionChatTransport({
      baseURL: server.url,
      taskIdentifier: 'echo',
      startSession: callbacks.startSession,
      getAccessToken: callbacks.getAccessToken,
    });
    const error = await sendError(transport);
    transport.close();
    expect(error).toMatchObject({
      name: 'ConfigurationError',
      code: 'SECRET_KEY_REJECTED',
      retryable: false,
    });
  });

  it('keeps the route code as serverCode; authorize saying no is not retryable', async () => {
    const { callbacks } = await route({ authorize: () => false });
    const error = await failure(callbacks.startSession({ chatId: 'not-mine' }));
    expect(error).toMatchObject({
      name: 'AuthError',
      code: 'FORBIDDEN',
      status: 403,
      serverCode: 'FORBIDDEN',
      retryable: false,
    });
    expect(error.message).toBe(
      'chat route start failed with HTTP 403 (FORBIDDEN): not allowed for this chat',
    );
  });
});

describe('a relative endpoint outside a browser', () => {
  it('fails at once with INVALID_CONFIG naming the fix, not a retryable network error', async () => {
    const callbacks = createRouteSessionCallbacks({ endpoint: '/api/chat-session' });
    const error = await failure(callbacks.startSession({ chatId: 'ssr-chat' }));
    expect(error).toMatchObject({
      name: 'ConfigurationError',
      code: 'INVALID_CONFIG',
      field: 'endpoint',
      retryable: false,
    });
    expect(error.message).toContain('endpoint "/api/chat-session" is relative');
    expect(error.message).toContain('Pass an absolute URL');
  });
});
