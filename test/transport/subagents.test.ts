import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDemoAgent, type DevServer, startDevServer } from '../../src/dev-server/index.js';
import { SessionChatTransport } from '../../src/transport/session-chat-transport.js';
import { SubagentMessages } from '../../src/transport/subagent-messages.js';
import {
  quietLogger,
  startSessionVia,
  TestChat,
  uniqueChatId,
  waitFor,
} from './support/dev-server-fixture.js';

// Faults are armed on this file's own server.
let server: DevServer;
beforeAll(async () => {
  server = await startDevServer({
    port: 0,
    agents: [createDemoAgent({ chunkDelayMs: 10, firstChunkDelayMs: 0 })],
    logger: quietLogger,
  });
});
afterAll(() => server.close());

const textOf = (message: { parts: { type: string; text?: string }[] } | undefined) =>
  message?.parts.map((part) => (part.type === 'text' ? part.text : '')).join('') ?? '';

/** One research turn with the AI SDK's Chat, its data parts fed to `subagents`; counts what was new and what repeated. */
function researchChat(subagents: SubagentMessages) {
  const counts = { applied: 0, repeated: 0 };
  const transport = new SessionChatTransport({
    baseURL: server.url,
    taskIdentifier: 'demo',
    startSession: startSessionVia(server),
  });
  const chat = new TestChat({
    id: uniqueChatId('research'),
    transport,
    onData: (part) => {
      if (part.type !== 'data-subagent') return;
      if (subagents.apply(part)) counts.applied++;
      else counts.repeated++;
    },
  });
  return { chat, transport, counts };
}

describe('sub-agent messages from data-subagent batches', () => {
  it('batches replayed after a drop (the turn resumed from its start) are applied once', async () => {
    // A clean run first: what the sub-agent's message is when every batch arrives once.
    const clean = new SubagentMessages();
    const reference = researchChat(clean);
    await reference.chat.sendMessage({ text: 'research durable streams' });
    await clean.settled();
    // The demo model numbers its tool calls: each chat's research call has an id of its own.
    const only = (messages: SubagentMessages) => {
      expect(messages.getSnapshot().size).toBe(1);
      return [...messages.getSnapshot().values()][0];
    };
    const expected = only(clean);
    expect(expected?.finished).toBe(true);
    expect(reference.counts.repeated).toBe(0);
    reference.transport.close();

    const subagents = new SubagentMessages();
    const { chat, transport, counts } = researchChat(subagents);
    server.faults.dropOutAfter(6, { connections: 2 });
    const sent = chat.sendMessage({ text: 'research durable streams' });
    await waitFor(() => counts.applied >= 3, 10_000, 'some sub-agent batches');
    // The connection dropped and the page resumes the live turn: it is replayed from its start,
    // so the batches already applied arrive again.
    await chat.resumeStream();
    await sent;
    await waitFor(() => chat.status === 'ready' && only(subagents)?.finished === true);
    await subagents.settled();
    server.faults.reset();

    expect(counts.repeated).toBeGreaterThan(0);
    const entry = only(subagents);
    expect(entry?.applied).toBe(expected?.applied);
    expect(textOf(entry?.message)).toBe(textOf(expected?.message));
    expect(entry?.message?.parts).toEqual(expected?.message?.parts);
    transport.close();
  });

  it('holds a batch that arrives ahead of a missing seq until the gap is filled, and skips repeats', async () => {
    const subagents = new SubagentMessages();
    const batch = (seq: number, chunks: unknown[]) => ({
      type: 'data-subagent',
      data: { toolCallId: 'call_1', seq, chunks },
    });
    const start = [
      { type: 'start', messageId: 'sub_1' },
      { type: 'text-start', id: 't' },
    ];
    expect(subagents.apply(batch(1, [{ type: 'text-delta', id: 't', delta: ' world' }]))).toBe(true);
    expect(subagents.get('call_1')?.applied).toBe(0);
    expect(subagents.apply(batch(0, [...start, { type: 'text-delta', id: 't', delta: 'hello' }]))).toBe(true);
    expect(subagents.apply(batch(0, [...start, { type: 'text-delta', id: 't', delta: 'hello' }]))).toBe(
      false,
    );
    expect(subagents.apply(batch(2, [{ type: 'text-end', id: 't' }, { type: 'finish' }]))).toBe(true);
    expect(subagents.apply({ type: 'data-other', data: {} })).toBe(false);
    await subagents.settled();
    expect(subagents.get('call_1')).toMatchObject({ applied: 3, finished: true });
    expect(textOf(subagents.get('call_1')?.message)).toBe('hello world');
  });
});
