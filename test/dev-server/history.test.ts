import type { UIMessage, UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import {
  mergeById,
  overlayToolParts,
  replayOut,
  trimTrailingAssistant,
} from '../../src/dev-server/runs/history.js';
import { commandRecord, dataRecord, type OutRecord, turnCompleteRecord } from '../../src/protocol/index.js';

const quiet = { warn() {} };

function records(items: (UIMessageChunk | 'turn-complete' | 'trim')[]): OutRecord[] {
  return items.map((item, seq) => {
    if (item === 'turn-complete') return turnCompleteRecord(seq, seq);
    if (item === 'trim') return commandRecord(seq, seq);
    return dataRecord(seq, seq, item, `p${seq}`);
  });
}

const text = (message: UIMessage | undefined) =>
  message?.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');

describe('replayOut', () => {
  it('rebuilds completed assistant messages and sets a trailing partial apart', async () => {
    const replay = await replayOut(
      records([
        { type: 'start', messageId: 'a1' },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'hello ' },
        { type: 'text-delta', id: 't', delta: 'world' },
        { type: 'text-end', id: 't' },
        { type: 'finish' },
        'turn-complete',
        'trim',
        { type: 'start', messageId: 'a2' },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'cut sh' },
      ]),
      new Map(),
      quiet,
    );
    expect(replay.completed.map((message) => [message.id, text(message)])).toEqual([['a1', 'hello world']]);
    expect(replay.trailing?.id).toBe('a2');
    expect(text(replay.trailing)).toBe('cut sh');
  });

  it('continues a known message when a start chunk reuses its id (tool answers)', async () => {
    const known: UIMessage = { id: 'a1', role: 'assistant', parts: [{ type: 'text', text: 'before. ' }] };
    const replay = await replayOut(
      records([
        { type: 'start', messageId: 'a1' },
        { type: 'text-start', id: 'u' },
        { type: 'text-delta', id: 'u', delta: 'after.' },
        { type: 'text-end', id: 'u' },
        { type: 'finish' },
        'turn-complete',
      ]),
      new Map([['a1', known]]),
      quiet,
    );
    expect(replay.completed).toHaveLength(1);
    expect(text(replay.completed[0])).toBe('before. after.');
  });
});

describe('mergeById, overlayToolParts, trimTrailingAssistant', () => {
  const user: UIMessage = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hi' }] };
  const stale: UIMessage = { id: 'a1', role: 'assistant', parts: [{ type: 'text', text: 'old' }] };
  const fresh: UIMessage = { id: 'a1', role: 'assistant', parts: [{ type: 'text', text: 'new' }] };
  const extra: UIMessage = { id: 'a2', role: 'assistant', parts: [{ type: 'text', text: 'more' }] };

  it('merges by id: the replayed message wins in place, new ones append', () => {
    expect(mergeById([user, stale], [fresh, extra])).toEqual([user, fresh, extra]);
  });

  it('overlays only the tool state, approval, output and errorText of matching tool calls', () => {
    const assistant = {
      id: 'a1',
      role: 'assistant',
      parts: [
        { type: 'text', text: 'calling' },
        {
          type: 'tool-confirm',
          toolCallId: 'c1',
          state: 'approval-requested',
          input: { x: 1 },
          approval: { id: 'ap1' },
        },
        { type: 'tool-other', toolCallId: 'c2', state: 'input-available', input: {} },
      ],
    } as unknown as UIMessage;
    const messages = [user, assistant];
    const slim = {
      id: 'a1',
      role: 'assistant',
      parts: [
        {
          type: 'tool-confirm',
          toolCallId: 'c1',
          state: 'approval-responded',
          input: { x: 999 },
          approval: { id: 'ap1', approved: true },
        },
      ],
    } as unknown as UIMessage;
    const updated = overlayToolParts(messages, slim);
    expect(updated.parts).toEqual([
      { type: 'text', text: 'calling' },
      {
        type: 'tool-confirm',
        toolCallId: 'c1',
        state: 'approval-responded',
        input: { x: 1 },
        approval: { id: 'ap1', approved: true },
      },
      { type: 'tool-other', toolCallId: 'c2', state: 'input-available', input: {} },
    ]);
    expect(messages[1]).toBe(updated);
  });

  it('appends a tool response whose message is unknown', () => {
    const messages = [user];
    overlayToolParts(messages, extra);
    expect(messages).toEqual([user, extra]);
  });

  it('drops every trailing assistant message for a regenerate', () => {
    const messages = [user, stale, extra];
    trimTrailingAssistant(messages);
    expect(messages).toEqual([user]);
  });
});
