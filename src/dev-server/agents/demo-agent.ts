import { convertToModelMessages, jsonSchema, stepCountIs, streamText, tool, type UIMessageChunk } from 'ai';
import { MockLanguageModelV3, simulateReadableStream } from 'ai/test';
import { defineAgent } from './define-agent.js';
import { demoScript, subagentScript } from './demo-script.js';
import { SubagentChannel } from './subagent-stream.js';

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

/** A tool that hands the topic to a sub-agent, whose reply streams as `data-subagent` batches. */
function researchTool(channel: SubagentChannel, model: MockLanguageModelV3, signal: AbortSignal) {
  return tool({
    description: 'Ask the research sub-agent about a topic.',
    inputSchema: jsonSchema<{ topic: string }>({
      type: 'object',
      properties: { topic: { type: 'string' } },
      required: ['topic'],
    }),
    execute: async ({ topic }, { toolCallId }) => {
      const result = streamText({ model, prompt: topic, abortSignal: signal });
      await channel.pipe(toolCallId, result);
      return { summary: await result.text };
    },
  });
}

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
 * supplies, a `research` tool that calls a sub-agent (its reply streams as `data-subagent`
 * batches), a `data-status` part each turn and a long answer worth stopping.
 */
export function createDemoAgent(options: DemoAgentOptions = {}) {
  let calls = 0;
  const subagentModel = new MockLanguageModelV3({
    doStream: async ({ prompt }) => ({
      stream: simulateReadableStream({
        chunks: subagentScript(prompt),
        initialDelayInMs: options.firstChunkDelayMs ?? 300,
        chunkDelayInMs: options.chunkDelayMs ?? 30,
      }),
    }),
  });
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
      const channel = new SubagentChannel();
      const result = streamText({
        model,
        system: 'You are the durable-chat demo agent.',
        messages: await convertToModelMessages(messages),
        tools: { sendEmail, askUser, research: researchTool(channel, subagentModel, signal) },
        stopWhen: stepCountIs(3),
        abortSignal: signal,
      });
      const stream = result.toUIMessageStream({
        originalMessages: messages,
        generateMessageId: () => responseMessageId,
      });
      return channel.merge(withStatus(stream, { turn, messages: messages.length }));
    },
  });
}

export const demoAgent = createDemoAgent();
