// The chunks that rebuild a message (a continuation's base on resume), read back by the AI SDK's
// own stream processing (ai 6 and ai 7): the message comes out with the same parts.
import { readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { chunksRebuilding, prefixedStream } from '../../src/session/rebuild-message.js';

const streamOf = (chunks: UIMessageChunk[]) =>
  new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });

async function readBack(chunks: UIMessageChunk[]): Promise<UIMessage | undefined> {
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream({ stream: streamOf(chunks) })) last = message;
  return last;
}

/** The fields a part is compared by (the AI SDK adds undefined ones and provider metadata). */
const shape = (message: UIMessage | undefined) =>
  message?.parts.map((part) => {
    const { type, ...rest } = part as Record<string, unknown> & { type: string };
    const kept: Record<string, unknown> = { type };
    for (const key of ['text', 'toolCallId', 'state', 'input', 'output', 'errorText', 'url', 'data'])
      if (rest[key] !== undefined) kept[key] = rest[key];
    return kept;
  });

describe('chunksRebuilding', () => {
  it('rebuilds steps, text, reasoning, data and tool parts in every state the continuation needs', async () => {
    const message = {
      id: 'assistant-1',
      role: 'assistant',
      parts: [
        { type: 'step-start' },
        { type: 'reasoning', text: 'thinking', state: 'done' },
        { type: 'text', text: 'Let me check.', state: 'done' },
        {
          type: 'tool-lookup',
          toolCallId: 'call-1',
          state: 'output-available',
          input: { q: 1 },
          output: 'found',
        },
        { type: 'tool-failing', toolCallId: 'call-2', state: 'output-error', input: {}, errorText: 'boom' },
        { type: 'step-start' },
        { type: 'data-note', id: 'note-1', data: { n: 1 } },
        {
          type: 'tool-confirm',
          toolCallId: 'call-3',
          state: 'approval-requested',
          input: { text: 'ship it' },
          approval: { id: 'approval-3' },
        },
      ],
    } as unknown as UIMessage;
    const rebuilt = await readBack(chunksRebuilding(message));
    expect(rebuilt?.id).toBe('assistant-1');
    expect(shape(rebuilt)).toEqual(shape(message));
  });

  it('gives a continuation its base: the continued tool call takes its output (no "No tool invocation found")', async () => {
    const base = {
      id: 'assistant-2',
      role: 'assistant',
      parts: [
        { type: 'step-start' },
        {
          type: 'tool-confirm',
          toolCallId: 'call-9',
          state: 'approval-responded',
          input: { text: 'ship it' },
          approval: { id: 'approval-9', approved: true },
        },
      ],
    } as unknown as UIMessage;
    const continuation: UIMessageChunk[] = [
      { type: 'start' },
      { type: 'start-step' },
      { type: 'tool-output-available', toolCallId: 'call-9', output: { confirmed: true } },
      { type: 'finish-step' },
      { type: 'finish' },
    ];
    const source = streamOf(continuation);
    let last: UIMessage | undefined;
    for await (const message of readUIMessageStream({
      stream: prefixedStream(chunksRebuilding(base), source),
    }))
      last = message;
    expect(shape(last)).toEqual([
      { type: 'step-start' },
      {
        type: 'tool-confirm',
        toolCallId: 'call-9',
        state: 'output-available',
        input: { text: 'ship it' },
        output: { confirmed: true },
      },
      { type: 'step-start' },
    ]);
  });
});
