import type { UIMessage, UIMessageChunk } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DevServer, echoAgent, startDevServer } from '../../src/dev-server/index.js';
import type { DurableChatError } from '../../src/errors/durable-chat-error.js';
import { createRouteSessionCallbacks } from '../../src/route-client/create-route-session-callbacks.js';
import { createChatRouteHandler } from '../../src/server/chat-route-handler.js';
import { SessionChatTransport } from '../../src/transport/index.js';
import { hostFetchHandler, type Listening } from './support/listen.js';

// Issue 21 item 6: the route decides the task. The browser need not name it; a browser that
// names another one is refused with the fix, instead of silently talking to the route's agent.

let server: DevServer;
let app: Listening;
const reported: DurableChatError[] = [];
beforeAll(async () => {
  server = await startDevServer({ port: 0, agents: [echoAgent], logger: { warn() {} } });
  app = await hostFetchHandler(
    createChatRouteHandler({
      baseURL: server.url,
      secretKey: server.secretKey,
      taskIdentifier: 'echo',
      authorize: () => true,
      onError: (error) => reported.push(error as DurableChatError),
    }),
  );
});
afterAll(async () => {
  await app.close();
  await server.close();
});

let counter = 0;
const nextChatId = () => `task-id-${Date.now()}-${++counter}`;

/** The browser half, with only what a chat needs: no task id unless `taskIdentifier` is given. */
function browser(taskIdentifier?: string) {
  const route = createRouteSessionCallbacks({ endpoint: `${app.url}/api/chat-session` });
  return new SessionChatTransport({
    baseURL: server.url,
    ...(taskIdentifier === undefined ? {} : { taskIdentifier }),
    ...route,
    environment: { warn: () => {} },
  });
}

/** The reply text of one send, or the error it ended with. */
async function send(
  transport: SessionChatTransport,
  chatId: string,
  text: string,
): Promise<string | unknown> {
  const message: UIMessage = { id: `m-${counter}`, role: 'user', parts: [{ type: 'text', text }] };
  try {
    const stream: ReadableStream<UIMessageChunk> = await transport.sendMessages({
      chatId,
      messages: [message],
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: undefined,
    });
    let reply = '';
    const reader = stream.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return reply;
      if (value.type === 'text-delta') reply += value.delta;
      if (value.type === 'error') return new Error(value.errorText);
    }
  } catch (error) {
    return error;
  }
}

describe('taskIdentifier is the route’s', () => {
  it('a browser that names no task gets the route’s agent', async () => {
    const transport = browser();
    expect(await send(transport, nextChatId(), 'hi')).toBe('Echo: hi');
    transport.close();
  });

  it('a browser naming the route’s own task works as before', async () => {
    const transport = browser('echo');
    expect(await send(transport, nextChatId(), 'same')).toBe('Echo: same');
    transport.close();
  });

  it('a browser naming another task fails its first send with TASK_MISMATCH naming the fix; nothing is created', async () => {
    reported.length = 0;
    const transport = browser('demo');
    const chatId = nextChatId();
    const error = await send(transport, chatId, 'which agent?');
    expect(error).toMatchObject({
      name: 'ConfigurationError',
      code: 'TASK_MISMATCH',
      status: 400,
      retryable: false,
    });
    expect((error as Error).message).toContain(
      'the browser asked for task "demo", and this chat route serves "echo"',
    );
    expect((error as Error).message).toContain("Remove taskIdentifier from the browser's options");
    expect(reported.map((problem) => problem.code)).toEqual(['TASK_MISMATCH']);
    const row = await fetch(`${server.url}/api/v1/sessions/${encodeURIComponent(chatId)}`, {
      headers: { authorization: `Bearer ${server.secretKey}` },
    });
    expect(row.status).toBe(404);
    transport.close();
  });
});
