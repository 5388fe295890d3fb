import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors/index.js';
import {
  actionChunk,
  headStartChunk,
  regenerateChunk,
  resolvedToolParts,
  serializeAppend,
  stopChunk,
  submitChunk,
  toolResponseChunk,
  userMessageChunk,
  validateInputChunk,
} from '../../src/protocol/index.js';

const user: UIMessage = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Book a flight' }] };

/** An assistant turn as the AI SDK holds it after the user answered two tool calls. */
const assistant = {
  id: 'msg_from_start_chunk',
  role: 'assistant',
  metadata: { model: 'x' },
  parts: [
    { type: 'step-start' },
    { type: 'reasoning', text: 'thinking…', state: 'done' },
    { type: 'text', text: 'I need approval.', state: 'done' },
    {
      type: 'tool-bookFlight',
      toolCallId: 'call-1',
      state: 'approval-responded',
      input: { to: 'CDG' },
      approval: { id: 'ap-1', approved: true },
      callProviderMetadata: { big: 'x'.repeat(100) },
    },
    {
      type: 'tool-askUser',
      toolCallId: 'call-2',
      state: 'output-available',
      input: { q: 'seat?' },
      output: '12A',
    },
    { type: 'tool-search', toolCallId: 'call-3', state: 'input-available', input: { q: 'hotels' } },
    {
      type: 'tool-pay',
      toolCallId: 'call-4',
      state: 'approval-requested',
      input: {},
      approval: { id: 'ap-4' },
    },
    { type: 'tool-weather', toolCallId: 'call-5', state: 'output-error', input: {}, errorText: 'timeout' },
    {
      type: 'dynamic-tool',
      toolName: 'lookup',
      toolCallId: 'call-6',
      state: 'output-denied',
      input: { id: 1 },
      approval: { id: 'ap-6', approved: false, reason: 'no' },
    },
    { type: 'data-progress', data: { percent: 50 } },
  ],
} as unknown as UIMessage;

const slimParts = [
  {
    type: 'tool-bookFlight',
    toolCallId: 'call-1',
    state: 'approval-responded',
    input: { to: 'CDG' },
    approval: { id: 'ap-1', approved: true },
  },
  {
    type: 'tool-askUser',
    toolCallId: 'call-2',
    state: 'output-available',
    input: { q: 'seat?' },
    output: '12A',
  },
  { type: 'tool-weather', toolCallId: 'call-5', state: 'output-error', input: {}, errorText: 'timeout' },
  {
    type: 'dynamic-tool',
    toolCallId: 'call-6',
    state: 'output-denied',
    toolName: 'lookup',
    input: { id: 1 },
    approval: { id: 'ap-6', approved: false, reason: 'no' },
  },
];

describe('.in chunk builders: exact output', () => {
  it('user message: one message, submit-message, no history, no undefined keys', () => {
    const chunk = userMessageChunk({ chatId: 'chat-1', message: user, metadata: { userId: 'u' } });
    expect(chunk).toEqual({
      kind: 'message',
      payload: { chatId: 'chat-1', trigger: 'submit-message', message: user, metadata: { userId: 'u' } },
    });
    const bare = userMessageChunk({ chatId: 'chat-1', message: user });
    expect(Object.keys(bare.kind === 'message' ? bare.payload : {})).toEqual([
      'chatId',
      'trigger',
      'message',
    ]);
    expect(serializeAppend(bare)).toBe(
      '{"kind":"message","payload":{"chatId":"chat-1","trigger":"submit-message","message":{"id":"u1","role":"user","parts":[{"type":"text","text":"Book a flight"}]}}}',
    );
  });

  it('user message refuses a non-user role', () => {
    expect(() => userMessageChunk({ chatId: 'c', message: assistant })).toThrow(ValidationError);
  });

  it('stop, with and without a message', () => {
    expect(stopChunk()).toEqual({ kind: 'stop' });
    expect(Object.keys(stopChunk())).toEqual(['kind']);
    expect(stopChunk('user pressed stop')).toEqual({ kind: 'stop', message: 'user pressed stop' });
  });

  it('action: no message', () => {
    expect(actionChunk({ chatId: 'c', action: { type: 'undo' }, metadata: { m: 1 } })).toEqual({
      kind: 'message',
      payload: { chatId: 'c', trigger: 'action', action: { type: 'undo' }, metadata: { m: 1 } },
    });
  });

  it('regenerate: no message, optional messageId', () => {
    expect(regenerateChunk({ chatId: 'c' })).toEqual({
      kind: 'message',
      payload: { chatId: 'c', trigger: 'regenerate-message' },
    });
    expect(regenerateChunk({ chatId: 'c', messageId: 'a1', metadata: 'm' })).toEqual({
      kind: 'message',
      payload: { chatId: 'c', trigger: 'regenerate-message', messageId: 'a1', metadata: 'm' },
    });
  });

  it('head start: the one chunk that carries history', () => {
    expect(headStartChunk({ chatId: 'c', headStartMessages: [user, assistant] })).toEqual({
      kind: 'message',
      payload: { chatId: 'c', trigger: 'handover-prepare', headStartMessages: [user, assistant] },
    });
  });

  it('every builder output passes the dev server check', () => {
    for (const chunk of [
      userMessageChunk({ chatId: 'c', message: user }),
      stopChunk(),
      stopChunk('why'),
      actionChunk({ chatId: 'c', action: 1 }),
      regenerateChunk({ chatId: 'c' }),
      headStartChunk({ chatId: 'c', headStartMessages: [user] }),
      toolResponseChunk({ chatId: 'c', message: assistant }),
    ]) {
      expect(() => validateInputChunk(JSON.parse(serializeAppend(chunk)))).not.toThrow();
    }
  });
});

describe('slim tool responses', () => {
  it('keeps only the resolved tool parts, trimmed to what the agent overlays', () => {
    expect(resolvedToolParts(assistant)).toEqual(slimParts);
  });

  it('sends them under the message id of the start chunk, nothing else of the message', () => {
    const chunk = toolResponseChunk({ chatId: 'chat-1', message: assistant, metadata: { userId: 'u' } });
    expect(chunk).toEqual({
      kind: 'message',
      payload: {
        chatId: 'chat-1',
        trigger: 'submit-message',
        message: { id: 'msg_from_start_chunk', role: 'assistant', parts: slimParts },
        metadata: { userId: 'u' },
      },
    });
    // About 1 KiB in practice; here far below the full message.
    expect(serializeAppend(chunk).length).toBeLessThan(JSON.stringify(assistant).length);
  });

  it('refuses a message with nothing resolved, and a non-assistant message', () => {
    const pending = { ...assistant, parts: assistant.parts.slice(5, 7) } as UIMessage;
    const error = (() => {
      try {
        toolResponseChunk({ chatId: 'c', message: pending });
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe('message.parts');
    expect(() => toolResponseChunk({ chatId: 'c', message: user })).toThrow(ValidationError);
  });

  it('submitChunk routes the last message: user text or tool response', () => {
    expect(submitChunk({ chatId: 'c', message: user })).toEqual(
      userMessageChunk({ chatId: 'c', message: user }),
    );
    expect(submitChunk({ chatId: 'c', message: assistant })).toEqual(
      toolResponseChunk({ chatId: 'c', message: assistant }),
    );
  });
});
