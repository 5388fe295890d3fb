import { convertToModelMessages, jsonSchema, stepCountIs, streamText, tool, type UIMessageChunk } from 'ai';
import { MockLanguageModelV3, simulateReadableStream } from 'ai/test';
import { defineAgent } from './define-agent.js';
import { demoScript } from './demo-script.js';

export interface DemoAgentOptions {
  /** Pause between streamed pieces (a human reading pace). Default 30 ms. */
  chunkDelayMs?: number;
  /** Pause before the first piece. Default 300 ms. */
  firstChunkDelayMs?: number;
}

const sendEmail = tool({
  description: 'Send an email on the user’s behalf (asks for approval first).',
  inputSchema: jsonSchema<{ to: string; subject: string; body: string }>({
    type: 'object',
    properties: { to: { type: 'string' }, subject: { type: 'string' }, body: { type: 'string' } },
    required: ['to', 'subject', 'body'],
  }),
  needsApproval: true,
  execute: async ({ to, subject }) => ({ sent: true, to, subject }),
});

/** No `execute`: the user supplies the output (human in the loop). */
const askUser = tool({
  description: 'Ask the user to choose one of the options.',
  inputSchema: jsonSchema<{ question: string; options: string[] }>({
    type: 'object',
    properties: { question: { type: 'string' }, options: { type: 'array', items: { type: 'string' } } },
    required: ['question', 'options'],
  }),
});

/** Adds a custom `data-status` part after the first step starts (a part the agent writes itself). */
async function* withStatus(
  stream: AsyncIterable<UIMessageChunk>,
  status: { turn: number; messages: number },
): AsyncGenerator<UIMessageChunk> {
  let written = false;
  for await (const chunk of stream) {
    yield chunk;
    if (!written && chunk.type === 'start-step') {
      written = true;
      yield { type: 'data-status', data: { state: 'thinking', ...status } };
    }
  }
}

/**
 * A demo agent that runs offline on the AI SDK's mock language model: markdown at a human
 * pace, a `sendEmail` tool that needs approval, an `askUser` tool whose output the user
 * supplies, a `data-status` part each turn and a long answer worth stopping.
 */
export function createDemoAgent(options: DemoAgentOptions = {}) {
  let calls = 0;
  const model = new MockLanguageModelV3({
    doStream: async ({ prompt }) => {
      calls += 1;
      return {
        stream: simulateReadableStream({
          chunks: demoScript(prompt, calls),
          initialDelayInMs: options.firstChunkDelayMs ?? 300,
          chunkDelayInMs: options.chunkDelayMs ?? 30,
        }),
      };
    },
  });
  return defineAgent({
    id: 'demo',
    async run({ messages, signal, responseMessageId, turn }) {
      const result = streamText({
        model,
        system: 'You are the durable-chat demo agent.',
        messages: await convertToModelMessages(messages),
        tools: { sendEmail, askUser },
        stopWhen: stepCountIs(3),
        abortSignal: signal,
      });
      const stream = result.toUIMessageStream({
        originalMessages: messages,
        generateMessageId: () => responseMessageId,
      });
      return withStatus(stream, { turn, messages: messages.length });
    },
  });
}

export const demoAgent = createDemoAgent();
