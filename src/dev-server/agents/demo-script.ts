import type { MockLanguageModelV3 } from 'ai/test';
import { splitText } from './abortable-delay.js';

// The provider types, read off the mock model so no undeclared package is imported.
type DoStream = MockLanguageModelV3['doStream'];
export type LanguageModelV3Prompt = Parameters<DoStream>[0]['prompt'];
export type LanguageModelV3StreamPart =
  Awaited<ReturnType<DoStream>>['stream'] extends ReadableStream<infer PART> ? PART : never;

const USAGE = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 20, text: 20, reasoning: 0 },
};

const LONG_ANSWER = [
  '# A long answer, worth stopping',
  '',
  'Durable chat sessions keep a conversation alive across reloads, dropped networks and',
  'restarts of the agent itself. Each message you send is one record on the `.in` channel;',
  'every chunk of this answer is one record on `.out`, numbered so a client can resume',
  'exactly where it stopped.',
  '',
  '## Why it matters',
  '',
  '1. **Reloads** resume the live turn from the cursor, without repeating a word.',
  '2. **Network drops** are healed inside the stream: the client reconnects with',
  '   `Last-Event-ID` and carries on.',
  '3. **Crashes** of the agent boot a new run from the snapshot plus the tail of `.out`.',
  '',
  '## What to try',
  '',
  '- Press *stop* now: the agent aborts this answer and completes the turn.',
  '- Reload the page halfway through: the answer continues where it was.',
  '- Ask me to *send an email* to see a tool that needs your approval.',
  '- Ask me to *ask you* something to supply a tool output yourself.',
  '',
  '```ts',
  'const server = await startDevServer({ port: 0, agents: [demoAgent] });',
  '```',
  '',
  'That is all for this long answer. Thanks for reading to the end!',
].join('\n');

function words(text: string): string[] {
  return text.split(/(?<=\s)/);
}

function textParts(id: string, text: string): LanguageModelV3StreamPart[] {
  const deltas = words(text).flatMap((word) => splitText(word, 24));
  return [
    { type: 'text-start', id },
    ...deltas.map((delta): LanguageModelV3StreamPart => ({ type: 'text-delta', id, delta })),
    { type: 'text-end', id },
  ];
}

function finish(unified: 'stop' | 'tool-calls'): LanguageModelV3StreamPart {
  return { type: 'finish', finishReason: { unified, raw: unified }, usage: USAGE };
}

function toolCall(toolCallId: string, toolName: string, input: unknown): LanguageModelV3StreamPart[] {
  return [{ type: 'tool-call', toolCallId, toolName, input: JSON.stringify(input) }, finish('tool-calls')];
}

function lastUserText(prompt: LanguageModelV3Prompt): string {
  for (let index = prompt.length - 1; index >= 0; index--) {
    const message = prompt[index];
    if (message?.role !== 'user') continue;
    return message.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
  }
  return '';
}

/** After a tool ran (or the user answered), a closing sentence about its result. */
function afterTool(prompt: LanguageModelV3Prompt): LanguageModelV3StreamPart[] | undefined {
  const last = prompt[prompt.length - 1];
  if (last?.role !== 'tool') return undefined;
  const result = last.content.find((part) => part.type === 'tool-result');
  if (result === undefined) return undefined;
  const output = result.output;
  const value = output.type === 'json' || output.type === 'text' ? output.value : output.type;
  if (result.toolName === 'research') {
    const summary = (value as { summary?: unknown } | undefined)?.summary;
    const text = `The research sub-agent reported back:\n\n> ${String(summary).replace(/\n/g, ' ')}`;
    return [...textParts('after-tool', text), finish('stop')];
  }
  const text =
    result.toolName === 'sendEmail'
      ? output.type === 'execution-denied'
        ? 'Understood, the email was **not** sent.'
        : `Done: the email is on its way (${JSON.stringify(value)}).`
      : `Thanks! You chose **${typeof value === 'string' ? value : JSON.stringify(value)}**.`;
  return [...textParts('after-tool', text), finish('stop')];
}

/** The research sub-agent's script: a few sentences about the topic it was given. */
export function subagentScript(prompt: LanguageModelV3Prompt): LanguageModelV3StreamPart[] {
  const topic = lastUserText(prompt).replace(/\s+/g, ' ').trim();
  const text = [
    `Looking into "${topic}". `,
    'A sub-agent runs as a tool call of the parent agent; ',
    'its chunks travel on the same .out stream in data-subagent batches, ',
    'numbered from 0 for each tool call, so a client that replays the stream applies each batch once.',
  ].join('');
  return [{ type: 'stream-start', warnings: [] }, ...textParts('sub', text), finish('stop')];
}

/**
 * The demo model's script, from the prompt alone (deterministic): "email" calls the
 * `sendEmail` tool (needs approval), "research" calls the `research` tool (a sub-agent
 * streams its answer), "ask" or "choose" calls `askUser` (the user supplies
 * the output), "long" or "story" streams a long markdown answer, anything else a short
 * markdown reply quoting the message.
 */
export function demoScript(prompt: LanguageModelV3Prompt, callNumber: number): LanguageModelV3StreamPart[] {
  const head: LanguageModelV3StreamPart[] = [{ type: 'stream-start', warnings: [] }];
  const closing = afterTool(prompt);
  if (closing !== undefined) return [...head, ...closing];
  const text = lastUserText(prompt);
  const lower = text.toLowerCase();
  if (lower.includes('email')) {
    const input = { to: 'team@example.com', subject: 'Hello from the demo', body: text };
    return [...head, ...toolCall(`call_email_${callNumber}`, 'sendEmail', input)];
  }
  if (lower.includes('research')) {
    return [...head, ...toolCall(`call_research_${callNumber}`, 'research', { topic: text })];
  }
  if (lower.includes('ask') || lower.includes('choose')) {
    const input = {
      question: 'Which flavour do you prefer?',
      options: ['vanilla', 'chocolate', 'pistachio'],
    };
    return [...head, ...toolCall(`call_ask_${callNumber}`, 'askUser', input)];
  }
  if (lower.includes('long') || lower.includes('story'))
    return [...head, ...textParts('long', LONG_ANSWER), finish('stop')];
  const reply = [
    '**Demo agent** here. You said:',
    '',
    `> ${text.replace(/\n/g, ' ')}`,
    '',
    'Try *"send an email"*, *"ask me something"* or *"tell me a long story"*.',
  ].join('\n');
  return [...head, ...textParts('reply', reply), finish('stop')];
}
