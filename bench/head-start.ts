import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getRequestListener } from '@hono/node-server';
import { convertToModelMessages, streamText, type UIMessage, type UIMessageChunk } from 'ai';
import { MockLanguageModelV3, simulateReadableStream } from 'ai/test';
import { createRouteSessionCallbacks, SessionChatTransport } from 'durable-chat';
import { createDemoAgent, startDevServer } from 'durable-chat/dev-server';
import { createChatRouteHandler, createHeadStartHandler } from 'durable-chat/server';
import { cliArgs } from './cli-args.js';
import { formatNumber, median } from './stats.js';

/**
 * `npm run bench:head-start [-- --runs=7 --boot-delay=2000]`: the first reply's time to first
 * chunk in a new chat against a dev-server agent that boots cold, without and with head start,
 * and the second turn's right after a head start (sent at once, while the agent may still be
 * booting). The route's model and the agent's have the same pace (300 ms to the first token,
 * 30 ms between tokens: the demo agent's defaults), so the difference is the boot the head
 * start hides. Medians of `runs` chats each, every chat new. Writes .tmp/bench-head-start.json.
 */
const options = cliArgs(process.argv.slice(2));
const runs = Number(options.get('runs') ?? 7);
const bootDelayMs = Number(options.get('boot-delay') ?? 2000);
const FIRST_TOKEN_MS = 300;
const TOKEN_MS = 30;

const USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** The route's model: the same first-token latency and pace as the dev server's demo agent. */
const routeModel = new MockLanguageModelV3({
  doStream: async () => ({
    stream: simulateReadableStream({
      initialDelayInMs: FIRST_TOKEN_MS,
      chunkDelayInMs: TOKEN_MS,
      chunks: [
        { type: 'stream-start' as const, warnings: [] },
        { type: 'text-start' as const, id: 't' },
        ...'Hello from the warm route, right away.'
          .split(/(?<= )/)
          .map((delta) => ({ type: 'text-delta' as const, id: 't', delta })),
        { type: 'text-end' as const, id: 't' },
        { type: 'finish' as const, finishReason: { unified: 'stop' as const, raw: 'stop' }, usage: USAGE },
      ],
    }),
  }),
});

const server = await startDevServer({
  port: 0,
  agents: [createDemoAgent({ firstChunkDelayMs: FIRST_TOKEN_MS, chunkDelayMs: TOKEN_MS })],
  bootDelayMs,
  logger: { warn() {} },
});
const chatRoute = createChatRouteHandler({
  baseURL: server.url,
  secretKey: server.secretKey,
  taskIdentifier: 'demo',
  authorize: () => true,
});
const headStartRoute = createHeadStartHandler({
  baseURL: server.url,
  secretKey: server.secretKey,
  taskIdentifier: 'demo',
  authorize: () => true,
  reply: async ({ messages, signal }) =>
    streamText({ model: routeModel, messages: await convertToModelMessages(messages), abortSignal: signal }),
});
const app = createServer(
  getRequestListener((request) =>
    new URL(request.url).pathname === '/head-start' ? headStartRoute(request) : chatRoute(request),
  ),
);
await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
const appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
const callbacks = createRouteSessionCallbacks({ endpoint: `${appUrl}/session` });

function transport(headStart: boolean): SessionChatTransport {
  return new SessionChatTransport({
    baseURL: server.url,
    taskIdentifier: 'demo',
    startSession: callbacks.startSession,
    getAccessToken: callbacks.getAccessToken,
    ...(headStart ? { headStart: { api: `${appUrl}/head-start` } } : {}),
  });
}

const user = (text: string): UIMessage => ({
  id: crypto.randomUUID(),
  role: 'user',
  parts: [{ type: 'text', text }],
});

/** Sends one turn; resolves with ms to its first text chunk and the whole reply. */
async function turn(
  subject: SessionChatTransport,
  chatId: string,
  messages: UIMessage[],
): Promise<{ firstChunkMs: number; reply: UIMessage }> {
  const started = performance.now();
  const stream = await subject.sendMessages({
    trigger: 'submit-message',
    chatId,
    messageId: undefined,
    messages,
    abortSignal: undefined,
  });
  let firstChunkMs = Number.NaN;
  let text = '';
  let id = '';
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const chunk: UIMessageChunk = value;
    if (chunk.type === 'start' && chunk.messageId !== undefined) id = chunk.messageId;
    if (chunk.type === 'text-delta') {
      if (Number.isNaN(firstChunkMs)) firstChunkMs = performance.now() - started;
      text += chunk.delta;
    }
  }
  // A reply that is empty or cut is no sample.
  if (text === '') throw new Error(`chat ${chatId}: the reply had no text`);
  return { firstChunkMs, reply: { id, role: 'assistant', parts: [{ type: 'text', text }] } };
}

const samples = { cold: [] as number[], headStart: [] as number[], secondTurn: [] as number[] };
for (let run = 0; run < runs; run++) {
  // Alternating, so a slow moment of the machine weighs on both.
  const plain = transport(false);
  samples.cold.push((await turn(plain, `cold-${run}-${Date.now()}`, [user('hello')])).firstChunkMs);
  plain.close();

  const fast = transport(true);
  const chatId = `head-start-${run}-${Date.now()}`;
  const question = user('hello');
  const first = await turn(fast, chatId, [question]);
  samples.headStart.push(first.firstChunkMs);
  const second = await turn(fast, chatId, [question, first.reply, user('and a second question')]);
  samples.secondTurn.push(second.firstChunkMs);
  if (!second.reply.parts.some((part) => part.type === 'text' && part.text.includes('second question')))
    throw new Error(`chat ${chatId}: the second reply does not answer the second question`);
  fast.close();
  process.stdout.write('.');
}
process.stdout.write('\n');

const rows = [
  ['first reply, no head start (cold agent)', samples.cold],
  ['first reply, head start', samples.headStart],
  ['second turn through .in, sent at once after the head start', samples.secondTurn],
] as const;
console.log(`time to first chunk, agent boot delay ${bootDelayMs} ms, ${runs} chats each (median; min-max):`);
for (const [label, values] of rows) {
  const sorted = [...values].sort((left, right) => left - right);
  console.log(
    `  ${label.padEnd(62)} ${formatNumber(median(values), 0).padStart(6)} ms  (${formatNumber(sorted[0] ?? Number.NaN, 0)}-${formatNumber(sorted.at(-1) ?? Number.NaN, 0)})`,
  );
}
const output = fileURLToPath(new URL('../.tmp/bench-head-start.json', import.meta.url));
await mkdir(dirname(output), { recursive: true });
await writeFile(
  output,
  `${JSON.stringify({ generatedAt: new Date().toISOString(), bootDelayMs, runs, samplesMs: samples }, null, 2)}\n`,
);
await new Promise<void>((resolve) => app.close(() => resolve()));
await server.close();
