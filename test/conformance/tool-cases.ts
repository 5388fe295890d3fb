import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { toolResponseChunk } from '../../src/protocol/index.js';
import type { ConformanceChat } from './support/conformance-chat.js';
import type { GetContext } from './support/suite-context.js';
import { hasContent, type Turn } from './support/turn.js';

interface ToolCall {
  messageId: string;
  toolCallId: string;
  toolName: string;
  input: unknown;
  approvalId: string | undefined;
}

/** Reads the tool call a turn streamed: the `start` chunk's message id and the call's fields. */
function toolCallOf(turn: Turn): ToolCall {
  const chunks = turn.data.map((record) => record.chunk as Record<string, unknown>);
  const start = chunks.find((chunk) => chunk.type === 'start');
  const available = chunks.find((chunk) => chunk.type === 'tool-input-available');
  const approval = chunks.find((chunk) => chunk.type === 'tool-approval-request');
  expect(typeof start?.messageId, 'start chunk with messageId').toBe('string');
  expect(available, 'a tool-input-available chunk').toBeDefined();
  return {
    messageId: String(start?.messageId),
    toolCallId: String(available?.toolCallId),
    toolName: String(available?.toolName),
    input: available?.input,
    approvalId: typeof approval?.approvalId === 'string' ? approval.approvalId : undefined,
  };
}

async function respond(
  chat: ConformanceChat,
  call: ToolCall,
  resolved: Record<string, unknown>,
): Promise<Turn> {
  const message = {
    id: call.messageId,
    role: 'assistant',
    parts: [{ type: `tool-${call.toolName}`, toolCallId: call.toolCallId, input: call.input, ...resolved }],
  } as unknown as UIMessage;
  const chunk = toolResponseChunk({
    chatId: chat.externalId,
    message,
    metadata: chat.target.options.metadata,
  });
  const append = await chat.append(chunk);
  expect(append.status, append.text).toBe(200);
  return chat.awaitTurn({ appendSeq: append.body?.seq as number | undefined });
}

export function describeTools(context: GetContext): void {
  describe('tool calls across turns', () => {
    it('approval: the call streams and completes the turn; a slim approval-responded message continues it', async (test) => {
      const text = context().target.options.toolApprovalText;
      if (text === undefined) return test.skip('target has no approval tool (options.toolApprovalText)');
      const chat = await context().openChat();
      const { turn } = await chat.send(text);
      expect(turn.chunkTypes).toEqual(expect.arrayContaining(['tool-input-start', 'tool-input-available']));
      const call = toolCallOf(turn);
      expect(call.approvalId, 'a tool-approval-request chunk').toBeDefined();
      const next = await respond(chat, call, {
        state: 'approval-responded',
        approval: { id: call.approvalId, approved: true },
      });
      expect(next.chunkTypes).toContain('tool-output-available');
      expect(hasContent(next)).toBe(true);
    });

    it('human in the loop: a slim output-available message continues the turn', async (test) => {
      const text = context().target.options.toolOutputText;
      if (text === undefined) return test.skip('target has no client-side tool (options.toolOutputText)');
      const chat = await context().openChat();
      const { turn } = await chat.send(text);
      const call = toolCallOf(turn);
      const next = await respond(chat, call, { state: 'output-available', output: 'blue' });
      expect(hasContent(next)).toBe(true);
    });
  });
}
