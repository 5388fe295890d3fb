import { convertToModelMessages, streamText, type UIMessage } from 'ai';
import { MockLanguageModelV3, simulateReadableStream } from 'ai/test';
import type { LanguageModelV3StreamPart } from '../../../src/dev-server/agents/demo-script.js';
import { type AgentDefinition, echoAgent } from '../../../src/dev-server/index.js';
import { createRouteSessionCallbacks } from '../../../src/route-client/create-route-session-callbacks.js';
import { createChatRouteHandler } from '../../../src/server/chat-route-handler.js';
import {
  createHeadStartHandler,
  type HeadStartHandlerOptions,
} from '../../../src/server/head-start-handler.js';
import { hostFetchHandler, type Listening } from '../../server/support/listen.js';
import { transcript } from './dev-server-fixture.js';

const USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** The route's own model (offline): "Route: <the user's text>", one word per chunk. */
export function routeModel(
  options: { chunkDelayMs?: number; firstChunkDelayMs?: number; failAfter?: number } = {},
) {
  return new MockLanguageModelV3({
    doStream: async ({ prompt }) => {
      const last = prompt[prompt.length - 1];
      const text =
        last?.role === 'user'
          ? last.content.map((part) => (part.type === 'text' ? part.text : '')).join('')
          : '';
      const words = `Route: ${text}`.split(/(?<= )/);
      const parts: LanguageModelV3StreamPart[] = [
        { type: 'stream-start', warnings: [] },
        { type: 'text-start', id: 't' },
      ];
      for (const word of words) parts.push({ type: 'text-delta', id: 't', delta: word });
      parts.push(
        { type: 'text-end', id: 't' },
        { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: USAGE },
      );
      if (options.failAfter !== undefined) {
        const cut = parts.slice(0, options.failAfter);
        return {
          stream: new ReadableStream<LanguageModelV3StreamPart>({
            start(controller) {
              for (const part of cut) controller.enqueue(part);
              controller.error(new Error('the model provider failed'));
            },
          }),
        };
      }
      return {
        stream: simulateReadableStream({
          chunks: parts,
          initialDelayInMs: options.firstChunkDelayMs ?? 0,
          chunkDelayInMs: options.chunkDelayMs ?? 0,
        }),
      };
    },
  });
}

/** The echo agent, noting the history each turn saw (role: text). */
export function historyAgent(): { agent: AgentDefinition; seen: string[][] } {
  const seen: string[][] = [];
  const agent: AgentDefinition = {
    ...(echoAgent as AgentDefinition),
    id: 'echo',
    run(context) {
      seen.push(transcript(context.messages as UIMessage[]));
      return echoAgent.run(context as Parameters<typeof echoAgent.run>[0]);
    },
  };
  return { agent, seen };
}

export interface HeadStartApp extends Listening {
  headStartUrl: string;
  callbacks: ReturnType<typeof createRouteSessionCallbacks>;
  calls: { headStart: number; start: number };
  errors: unknown[];
}

/** The app's server: the chat route at `/api/chat-session` and the head-start route at `/api/chat/head-start`. */
export async function startHeadStartApp(
  server: { url: string; secretKey: string },
  reply: HeadStartHandlerOptions['reply'],
  overrides: Partial<HeadStartHandlerOptions> = {},
): Promise<HeadStartApp> {
  const calls = { headStart: 0, start: 0 };
  const errors: unknown[] = [];
  const chatRoute = createChatRouteHandler({
    baseURL: server.url,
    secretKey: server.secretKey,
    taskIdentifier: 'echo',
    authorize: (_request, _chatId, action) => {
      if (action === 'start') calls.start++;
      return true;
    },
  });
  const headStart = createHeadStartHandler({
    baseURL: server.url,
    secretKey: server.secretKey,
    taskIdentifier: 'echo',
    authorize: () => {
      calls.headStart++;
      return true;
    },
    reply,
    onError: (error) => errors.push(error),
    ...overrides,
  });
  const listening = await hostFetchHandler((request) =>
    new URL(request.url).pathname === '/api/chat/head-start' ? headStart(request) : chatRoute(request),
  );
  return {
    ...listening,
    headStartUrl: `${listening.url}/api/chat/head-start`,
    callbacks: createRouteSessionCallbacks({ endpoint: `${listening.url}/api/chat-session` }),
    calls,
    errors,
  };
}

/** The route's reply: the route model through `streamText`, as an app writes it. */
export function streamTextReply(model: MockLanguageModelV3): HeadStartHandlerOptions['reply'] {
  return async ({ messages, signal }) =>
    streamText({ model, messages: await convertToModelMessages(messages), abortSignal: signal });
}
