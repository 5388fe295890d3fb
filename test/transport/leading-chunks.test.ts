import type { UIMessage, UIMessageChunk } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgentStream, type DevServer, defineAgent, echoAgent } from '../../src/dev-server/index.js';
import { SessionChatTransport } from '../../src/transport/session-chat-transport.js';
import {
  startEchoServer,
  startSessionVia,
  TestChat,
  uniqueChatId,
  waitFor,
} from './support/dev-server-fixture.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function textOf(message: UIMessage | undefined): string {
  return (message?.parts ?? []).map((p) => (p.type === 'text' ? p.text : '')).join('');
}

async function* transientFirst(signal: AbortSignal): AsyncIterable<UIMessageChunk> {
  yield { type: 'start' } as UIMessageChunk;
  yield { type: 'start-step' } as UIMessageChunk;
  yield { type: 'data-status', data: { text: 'searching…' }, transient: true } as UIMessageChunk;
  await new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
    setTimeout(resolve, 5_000);
  });
}

async function* metaOnly(): AsyncIterable<UIMessageChunk> {
  yield { type: 'start', messageMetadata: { model: 'x' } } as UIMessageChunk;
  yield { type: 'start-step' } as UIMessageChunk;
  yield { type: 'finish-step' } as UIMessageChunk;
  yield { type: 'finish', finishReason: 'length', messageMetadata: { usage: 42 } } as UIMessageChunk;
}

const scripted = defineAgent({
  ...echoAgent,
  run(context) {
    const text = textOf(context.messages[context.messages.length - 1]);
    if (text === 'transient first') return transientFirst(context.signal) as AgentStream;
    if ((context as { trigger?: string }).trigger === 'regenerate-message' || text === 'meta only')
      return metaOnly() as AgentStream;
    return echoAgent.run(context);
  },
});

let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer({ agents: [scripted] });
});
afterAll(async () => {
  await server.close();
});

function transport() {
  return new SessionChatTransport({
    baseURL: server.url,
    taskIdentifier: 'echo',
    startSession: startSessionVia(server),
    environment: { warn: () => {} },
  });
}

/**
 * A reply's leading `start` / `start-step` wait for its first content (an early Stop leaves no
 * empty message), but a transient data part goes ahead of them, and a reply that finished with
 * nothing to show (metadata, a finish reason) still reaches the chat. Default options.
 */
describe('leading structural chunks', () => {
  it('a transient data part before the text: Stop then leaves no empty assistant message', async () => {
    const chatId = uniqueChatId('transient-first');
    const data: unknown[] = [];
    const chat = new TestChat({ id: chatId, transport: transport(), onData: (d) => data.push(d) });
    const sending = chat.sendMessage({ text: 'transient first' });
    await waitFor(() => data.length > 0, 5_000, 'the transient data part');
    await sleep(100);
    await chat.stop();
    await sending.catch(() => {});
    await sleep(200);
    expect(chat.messages.map((m) => m.role)).toEqual(['user']);
  });

  it('a regenerate whose reply carries only metadata and a finish reason', async () => {
    const chatId = uniqueChatId('meta-only');
    const finishes: { finishReason?: string; message: UIMessage }[] = [];
    const chat = new TestChat({
      id: chatId,
      transport: transport(),
      onFinish: (event) => finishes.push(event as never),
    });
    await chat.sendMessage({ text: 'hello' });
    await chat.regenerate();
    await sleep(200);
    expect(chat.error).toBeUndefined();
    expect(finishes.at(-1)?.finishReason).toBe('length');
    // The regenerated reply shows nothing but is the agent's answer: its metadata is kept.
    expect(chat.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(chat.messages.at(-1)?.metadata).toEqual({ model: 'x', usage: 42 });
  });
});
