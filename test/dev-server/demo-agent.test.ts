import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDemoAgent, type DevServer, startDevServer } from '../../src/dev-server/index.js';
import {
  answerTool,
  append,
  chunkTypes,
  createSession,
  dataChunks,
  openChat,
  readNextTurn,
  readOut,
  replyText,
  sendText,
  untilTurnCompletes,
} from './support/client.js';

let server: DevServer;
beforeAll(async () => {
  server = await startDevServer({
    agents: [createDemoAgent({ chunkDelayMs: 0, firstChunkDelayMs: 0 })],
    logger: { warn() {} },
  });
});
afterAll(() => server.close());

describe('demo agent', () => {
  it('answers in markdown with a data-status part', async () => {
    const c = await openChat(server, 'demo-hello', 'demo');
    await sendText(server, c.chatId, c.token, c.chatId, 'hello demo');
    const read = await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(1) });
    expect(replyText(read.records)).toContain('> hello demo');
    expect(dataChunks(read.records)).toContainEqual({
      type: 'data-status',
      data: { state: 'thinking', turn: 0, messages: 1 },
    });
    expect(chunkTypes(read.records).slice(-2)).toEqual(['control:turn-complete', 'command:trim']);
  });

  it('asks approval for sendEmail, then sends it and confirms on the same message', async () => {
    const c = await openChat(server, 'demo-email', 'demo');
    await sendText(server, c.chatId, c.token, c.chatId, 'please send an email');
    const first = await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(1) });
    const chunks = dataChunks(first.records);
    const start = chunks.find((chunk) => chunk.type === 'start');
    const request = chunks.find((chunk) => chunk.type === 'tool-approval-request');
    const input = chunks.find((chunk) => chunk.type === 'tool-input-available');
    if (
      start?.type !== 'start' ||
      request?.type !== 'tool-approval-request' ||
      input?.type !== 'tool-input-available'
    ) {
      throw new Error(`unexpected chunks: ${chunkTypes(first.records).join(', ')}`);
    }
    expect(input.toolName).toBe('sendEmail');
    await answerTool(server, c.chatId, c.token, start.messageId ?? '', {
      type: 'tool-sendEmail',
      toolCallId: request.toolCallId,
      state: 'approval-responded',
      input: input.input,
      approval: { id: request.approvalId, approved: true },
    });
    const second = await readNextTurn(server, c.chatId, c.token, first.records);
    const next = dataChunks(second.records);
    expect(next[0]).toEqual({ type: 'start', messageId: start.messageId });
    expect(next).toContainEqual(
      expect.objectContaining({ type: 'tool-output-available', toolCallId: request.toolCallId }),
    );
    expect(replyText(second.records)).toContain('the email is on its way');
  });

  it('waits for a user-supplied askUser output, then thanks the user', async () => {
    const c = await openChat(server, 'demo-ask', 'demo');
    await sendText(server, c.chatId, c.token, c.chatId, 'ask me something');
    const first = await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(1) });
    const chunks = dataChunks(first.records);
    const start = chunks.find((chunk) => chunk.type === 'start');
    const call = chunks.find((chunk) => chunk.type === 'tool-input-available');
    if (start?.type !== 'start' || call?.type !== 'tool-input-available') throw new Error('no askUser call');
    expect(call.toolName).toBe('askUser');
    await answerTool(server, c.chatId, c.token, start.messageId ?? '', {
      type: 'tool-askUser',
      toolCallId: call.toolCallId,
      state: 'output-available',
      input: call.input,
      output: 'pistachio',
    });
    const second = await readNextTurn(server, c.chatId, c.token, first.records);
    expect(replyText(second.records)).toBe('Thanks! You chose **pistachio**.');
  });

  it('streams a long answer that a stop cuts short', async () => {
    const slow = await startDevServer({
      agents: [createDemoAgent({ chunkDelayMs: 5, firstChunkDelayMs: 0 })],
      logger: { warn() {} },
    });
    try {
      const created = await createSession(slow, { externalId: 'demo-long', taskIdentifier: 'demo' });
      const token = created.body.publicAccessToken;
      await sendText(slow, 'demo-long', token, 'demo-long', 'tell me a long story');
      await readOut(slow, 'demo-long', token, {
        until: (records) => chunkTypes(records).filter((type) => type === 'text-delta').length >= 5,
      });
      await append(slow, 'demo-long', token, { kind: 'stop' });
      const read = await readOut(slow, 'demo-long', token, { until: untilTurnCompletes(1) });
      const text = replyText(read.records);
      // At least the five deltas seen before the stop, never the end of the answer.
      expect(text.startsWith('# A long answer, worth ')).toBe(true);
      expect(text).not.toContain('Thanks for reading to the end!');
    } finally {
      await slow.close();
    }
  });
});
