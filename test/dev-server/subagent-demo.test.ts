import type { UIMessageChunk } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDemoAgent, type DevServer, startDevServer } from '../../src/dev-server/index.js';
import { readSubagentBatch, SubagentMessages } from '../../src/transport/subagent-messages.js';
import { dataChunks, openChat, readOut, replyText, sendText, untilTurnCompletes } from './support/client.js';

let server: DevServer;
beforeAll(async () => {
  server = await startDevServer({
    agents: [createDemoAgent({ chunkDelayMs: 0, firstChunkDelayMs: 0 })],
    logger: { warn() {} },
  });
});
afterAll(() => server.close());

const textOf = (message: { parts: { type: string; text?: string }[] } | undefined) =>
  message?.parts.map((part) => (part.type === 'text' ? part.text : '')).join('') ?? '';

describe('demo agent: a sub-agent call', () => {
  it('streams the research sub-agent as data-subagent batches numbered from 0, then reports back', async () => {
    const c = await openChat(server, 'demo-research', 'demo');
    await sendText(server, c.chatId, c.token, c.chatId, 'research durable streams');
    const read = await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(1) });
    const batches = dataChunks(read.records)
      .filter((chunk: UIMessageChunk) => chunk.type === 'data-subagent')
      .map((chunk) => {
        expect((chunk as { transient?: boolean }).transient).toBe(true);
        return readSubagentBatch(chunk);
      });
    expect(batches.length).toBeGreaterThan(2);
    const toolCallId = batches[0]?.toolCallId;
    expect(batches.map((batch) => batch?.seq)).toEqual(batches.map((_, index) => index));
    expect(batches.every((batch) => batch?.toolCallId === toolCallId)).toBe(true);

    const subagents = new SubagentMessages();
    for (const batch of dataChunks(read.records)) subagents.apply(batch);
    await subagents.settled();
    const entry = subagents.get(toolCallId ?? '');
    expect(entry?.finished).toBe(true);
    expect(textOf(entry?.message)).toContain('Looking into "research durable streams"');
    expect(replyText(read.records)).toContain('The research sub-agent reported back');
  });
});
