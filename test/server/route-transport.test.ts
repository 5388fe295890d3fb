import type { UIMessage, UIMessageChunk } from 'ai';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { echoAgent, startDevServer } from '../../src/dev-server/index.js';
import { createRouteSessionCallbacks } from '../../src/route-client/create-route-session-callbacks.js';
import { createChatRouteHandler } from '../../src/server/chat-route-handler.js';
import { SessionChatTransport } from '../../src/transport/index.js';
import type { SessionChatTransportOptions } from '../../src/transport/transport-options.js';
import { hostFetchHandler, type Listening } from './support/listen.js';

let server: Awaited<ReturnType<typeof startDevServer>>;
let app: Listening;
const routeCalls: string[] = [];

beforeAll(async () => {
  server = await startDevServer({ port: 0, agents: [echoAgent] });
  const handler = createChatRouteHandler({
    baseURL: server.url,
    secretKey: server.secretKey,
    taskIdentifier: 'echo',
    authorize: (_request, _chatId, action) => {
      routeCalls.push(action);
      return true;
    },
  });
  app = await hostFetchHandler(handler);
});
afterAll(async () => {
  await app?.close();
  await server?.close();
});

async function replyText(stream: ReadableStream<UIMessageChunk>): Promise<string> {
  let text = '';
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text;
    if (value.type === 'text-delta') text += value.delta;
  }
}

describe('SessionChatTransport with the route callbacks', () => {
  it('has exactly the callback shapes the transport takes', () => {
    const callbacks = createRouteSessionCallbacks({ endpoint: '/api/chat-session' });
    expectTypeOf(callbacks.startSession).toExtend<SessionChatTransportOptions['startSession']>();
    expectTypeOf(callbacks.getAccessToken).toExtend<
      NonNullable<SessionChatTransportOptions['getAccessToken']>
    >();
  });

  it('streams an echo reply through a session the route created', async () => {
    const callbacks = createRouteSessionCallbacks({ endpoint: `${app.url}/api/chat-session` });
    const transport = new SessionChatTransport({
      baseURL: server.url,
      taskIdentifier: 'echo',
      startSession: callbacks.startSession,
      getAccessToken: callbacks.getAccessToken,
    });
    const chatId = `route-transport-${Date.now()}`;
    const message: UIMessage = {
      id: 'm1',
      role: 'user',
      parts: [{ type: 'text', text: 'through the route' }],
    };
    const stream = await transport.sendMessages({
      chatId,
      messages: [message],
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: undefined,
    });
    expect(await replyText(stream)).toBe('Echo: through the route');
    expect(routeCalls).toContain('start');
    transport.close();
    await callbacks.closeSession({ chatId, reason: 'test done' });
    expect(routeCalls.at(-1)).toBe('close');
  });
});
