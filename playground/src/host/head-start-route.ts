import { convertToModelMessages, streamText } from 'ai';
import { MockLanguageModelV3, simulateReadableStream } from 'ai/test';
import { createHeadStartHandler, type HeadStartReply } from 'durable-chat/server';

export const HEAD_START_PATH = '/api/chat/head-start';

const USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

const REPLY =
  "**Head start.** This first reply streamed from the playground's own route (`createHeadStartHandler`) " +
  "while the demo agent's run was still booting. The route then handed the chat over: the agent took " +
  'this turn as its history, and your next message goes to it through `.in`.';

/** The route's model: offline, like the demo agent's, at the same pace. */
const routeModel = new MockLanguageModelV3({
  doStream: async () => ({
    stream: simulateReadableStream({
      initialDelayInMs: 150,
      chunkDelayInMs: 30,
      chunks: [
        { type: 'stream-start' as const, warnings: [] },
        { type: 'text-start' as const, id: 'head-start' },
        ...REPLY.split(/(?<= )/).map((delta) => ({ type: 'text-delta' as const, id: 'head-start', delta })),
        { type: 'text-end' as const, id: 'head-start' },
        { type: 'finish' as const, finishReason: { unified: 'stop' as const, raw: 'stop' }, usage: USAGE },
      ],
    }),
  }),
});

/** The metadata the page shows as "via head start": it rides on the reply's own `start` chunk. */
export const HEAD_START_METADATA = { headStart: true } as const;

/**
 * The playground's head-start route: a new chat's first reply from this host, then the
 * handover to the agent. Its reply is marked in its message metadata, so the page can show
 * which reply came this way (the agent's replies carry none).
 */
export function createPlaygroundHeadStart(options: {
  baseURL: () => string;
  secretKey: string;
  taskIdentifier: string;
}): (request: Request) => Promise<Response> {
  let handler: ((request: Request) => Promise<Response>) | undefined;
  return (request) => {
    // Built on first use: locally the session service is this very host, known once it listens.
    handler ??= createHeadStartHandler({
      baseURL: options.baseURL(),
      secretKey: options.secretKey,
      taskIdentifier: options.taskIdentifier,
      // A local playground has no users; a real app checks its own login here.
      authorize: () => true,
      reply: async ({ messages, signal }): Promise<HeadStartReply> => {
        const result = streamText({
          model: routeModel,
          messages: await convertToModelMessages(messages),
          abortSignal: signal,
        });
        return {
          toUIMessageStream: (streamOptions) =>
            result.toUIMessageStream({
              ...streamOptions,
              messageMetadata: ({ part }) => (part.type === 'start' ? HEAD_START_METADATA : undefined),
            }),
        };
      },
    });
    return handler(request);
  };
}
