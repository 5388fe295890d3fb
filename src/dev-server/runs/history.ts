import { readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import { classifyRecord, isTurnComplete } from '../../protocol/records.js';
import type { OutRecord } from '../../protocol/types.js';
import type { DevServerLogger } from '../logger.js';

/**
 * Joins runs of text or reasoning deltas of the same part into one delta. The reducer's
 * result is the same (deltas concatenate) but it emits one message snapshot per chunk, so
 * a long answer reduces in a handful of steps instead of one per delta.
 */
function compactDeltas(chunks: readonly UIMessageChunk[]): UIMessageChunk[] {
  const out: UIMessageChunk[] = [];
  for (const chunk of chunks) {
    const previous = out[out.length - 1];
    if (
      (chunk.type === 'text-delta' || chunk.type === 'reasoning-delta') &&
      previous?.type === chunk.type &&
      previous.id === chunk.id &&
      previous.providerMetadata === undefined &&
      chunk.providerMetadata === undefined
    ) {
      out[out.length - 1] = { ...previous, delta: previous.delta + chunk.delta };
    } else out.push(chunk);
  }
  return out;
}

/** Runs chunks through the AI SDK's own UI message reducer; `base` is continued when given. */
export async function reduceMessage(
  chunks: readonly UIMessageChunk[],
  base: UIMessage | undefined,
  logger: DevServerLogger,
): Promise<UIMessage | undefined> {
  if (chunks.length === 0) return base;
  const compacted = compactDeltas(chunks);
  // Pulled one chunk at a time: a pre-filled web stream queue dequeues in O(n) per chunk.
  let next = 0;
  const stream = new ReadableStream<UIMessageChunk>(
    {
      pull(controller) {
        const chunk = compacted[next++];
        if (chunk === undefined) controller.close();
        else controller.enqueue(chunk);
      },
    },
    { highWaterMark: 0 },
  );
  let last: UIMessage | undefined = base;
  const onError = (error: unknown) =>
    logger.warn('an assistant message could not be rebuilt from its chunks', error);
  for await (const message of readUIMessageStream({ message: base, stream, onError })) last = message;
  return last;
}

export interface ReplayResult {
  /** Assistant messages whose turn completed on `.out`, in order. */
  completed: UIMessage[];
  /** An assistant message with no turn-complete after it: a crashed or upgraded turn. */
  trailing: UIMessage | undefined;
}

/**
 * Rebuilds assistant messages from a `.out` tail. A `start` chunk opens a message (a known
 * id continues it, as tool responses do); a turn-complete closes the open one.
 */
export async function replayOut(
  records: readonly OutRecord[],
  known: ReadonlyMap<string, UIMessage>,
  logger: DevServerLogger,
): Promise<ReplayResult> {
  const completed = new Map<string, UIMessage>();
  let open: { id: string | undefined; chunks: UIMessageChunk[] } | undefined;
  const close = async () => {
    if (open === undefined) return undefined;
    const base = open.id === undefined ? undefined : (completed.get(open.id) ?? known.get(open.id));
    const message = await reduceMessage(open.chunks, base, logger);
    open = undefined;
    return message;
  };
  for (const record of records) {
    const classified = classifyRecord(record);
    if (isTurnComplete(classified)) {
      const message = await close();
      if (message !== undefined) completed.set(message.id, message);
    } else if (classified.kind === 'data') {
      const chunk = classified.chunk;
      if (chunk.type === 'start') {
        const message = await close();
        if (message !== undefined) completed.set(message.id, message);
        open = { id: chunk.messageId, chunks: [] };
      }
      open?.chunks.push(chunk);
    }
  }
  const trailing = await close();
  return { completed: [...completed.values()], trailing };
}

/** Snapshot and replayed messages merged by id; on a collision the replayed one wins. */
export function mergeById(snapshot: readonly UIMessage[], replayed: readonly UIMessage[]): UIMessage[] {
  const merged = [...snapshot];
  const index = new Map(merged.map((message, position) => [message.id, position]));
  for (const message of replayed) {
    const position = index.get(message.id);
    if (position === undefined) {
      index.set(message.id, merged.length);
      merged.push(message);
    } else merged[position] = message;
  }
  return merged;
}

type ToolPart = { type: string; toolCallId?: unknown; [key: string]: unknown };

function isToolPart(part: { type: string }): part is ToolPart {
  return part.type.startsWith('tool-') || part.type === 'dynamic-tool';
}

/**
 * Applies a tool approval or tool output: on the message with the same id, each tool part
 * with a matching `toolCallId` takes the incoming state and its `approval` / `output` /
 * `errorText`; every other field stays. Without a match the message is appended as sent.
 */
export function overlayToolParts(messages: UIMessage[], incoming: UIMessage): UIMessage {
  const position = messages.findIndex((message) => message.id === incoming.id);
  const target = messages[position];
  if (target === undefined) {
    messages.push(incoming);
    return incoming;
  }
  const updates = new Map<unknown, ToolPart>();
  for (const part of incoming.parts) if (isToolPart(part)) updates.set(part.toolCallId, part);
  const parts = target.parts.map((part) => {
    if (!isToolPart(part)) return part;
    const update = updates.get(part.toolCallId);
    if (update === undefined) return part;
    const next: ToolPart = { ...part, state: update.state };
    for (const key of ['approval', 'output', 'errorText'] as const) {
      if (update[key] !== undefined) next[key] = update[key];
    }
    return next;
  }) as UIMessage['parts'];
  const updated: UIMessage = { ...target, parts };
  messages[position] = updated;
  return updated;
}

/** Regenerate: drop trailing assistant messages so the last user turn is answered again. */
export function trimTrailingAssistant(messages: UIMessage[]): void {
  while (messages.length > 0 && messages[messages.length - 1]?.role === 'assistant') messages.pop();
}
