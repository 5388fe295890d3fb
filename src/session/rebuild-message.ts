import type { UIMessage, UIMessageChunk } from 'ai';

type Part = UIMessage['parts'][number];

interface ToolPartLike {
  type: string;
  toolCallId: string;
  toolName?: string;
  state: string;
  input?: unknown;
  output?: unknown;
  errorText?: string;
  providerExecuted?: boolean;
  approval?: { id: string };
}

const chunk = (value: Record<string, unknown>) => value as unknown as UIMessageChunk;

/** A tool part (static `tool-<name>` or `dynamic-tool`) as the chunks that bring it to its state. */
function toolChunks(part: ToolPartLike): UIMessageChunk[] {
  const dynamic = part.type === 'dynamic-tool';
  const toolName = dynamic ? (part.toolName ?? '') : part.type.slice('tool-'.length);
  const common = {
    toolCallId: part.toolCallId,
    ...(dynamic ? { dynamic: true } : {}),
    ...(part.providerExecuted === undefined ? {} : { providerExecuted: part.providerExecuted }),
  };
  if (part.state === 'input-streaming') return [chunk({ type: 'tool-input-start', toolName, ...common })];
  const chunks = [chunk({ type: 'tool-input-available', toolName, input: part.input, ...common })];
  if (part.approval !== undefined)
    chunks.push(
      chunk({ type: 'tool-approval-request', approvalId: part.approval.id, toolCallId: part.toolCallId }),
    );
  if (part.state === 'output-available')
    chunks.push(chunk({ type: 'tool-output-available', output: part.output, ...common }));
  else if (part.state === 'output-error')
    chunks.push(chunk({ type: 'tool-output-error', errorText: part.errorText ?? '', ...common }));
  else if (part.state === 'output-denied')
    chunks.push(chunk({ type: 'tool-output-denied', toolCallId: part.toolCallId }));
  return chunks;
}

function partChunks(part: Part, id: string): UIMessageChunk[] {
  const any = part as unknown as Record<string, unknown>;
  switch (part.type) {
    case 'text':
    case 'reasoning':
      return [
        chunk({ type: `${part.type}-start`, id }),
        chunk({ type: `${part.type}-delta`, id, delta: part.text }),
        chunk({ type: `${part.type}-end`, id }),
      ];
    case 'source-url':
    case 'source-document':
    case 'file':
      return [chunk({ ...any })];
    default:
      if (part.type === 'dynamic-tool' || part.type.startsWith('tool-'))
        return toolChunks(any as unknown as ToolPartLike);
      if (part.type.startsWith('data-')) return [chunk({ type: part.type, id: any.id, data: any.data })];
      return []; // a part kind this version does not know: left out rather than guessed
  }
}

/**
 * The chunks that rebuild `message` from nothing, as the AI SDK's stream processing reads
 * them: one `start` (the message's id), its steps, texts, reasoning, sources, files, data and
 * tool parts in their states. Why: a resumed stream is a replay (`resumeStreamIsReplay`), so
 * `useChat` starts the message afresh on its first `start`; when the live turn continues an
 * earlier message (a tool output or an approval answered), its chunks refer to that message's
 * tool calls, and replayed alone they fail ("No tool invocation found"). Sent first, these
 * chunks give the continuation its base. (An approval's answer is client state, not a chunk:
 * a rebuilt approval is a request until the continuation's output lands.)
 */
export function chunksRebuilding(message: UIMessage): UIMessageChunk[] {
  const chunks: UIMessageChunk[] = [
    chunk({
      type: 'start',
      messageId: message.id,
      ...(message.metadata === undefined ? {} : { messageMetadata: message.metadata }),
    }),
  ];
  let inStep = false;
  message.parts.forEach((part, index) => {
    if (part.type === 'step-start') {
      if (inStep) chunks.push(chunk({ type: 'finish-step' }));
      chunks.push(chunk({ type: 'start-step' }));
      inStep = true;
      return;
    }
    chunks.push(...partChunks(part, `rebuilt-${index}`));
  });
  if (inStep) chunks.push(chunk({ type: 'finish-step' }));
  return chunks;
}

/** `source` with `first` in front of it. */
export function prefixedStream<T>(first: T[], source: ReadableStream<T>): ReadableStream<T> {
  const reader = source.getReader();
  let index = 0;
  return new ReadableStream<T>({
    async pull(controller) {
      if (index < first.length) {
        controller.enqueue(first[index++] as T);
        return;
      }
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

const TOOL_RESULT_CHUNKS = new Set(['tool-output-available', 'tool-output-error', 'tool-output-denied']);

/**
 * A replayed turn whose continued message is not known from the record (a transcript loaded
 * with its history cursor, behind the turn: see `withHistoryCursor`): its chunks are held
 * until the first one that is not `start` / a step boundary. When that one is a tool result
 * for a call the stream has not brought, and the chat shows an assistant message with the
 * turn's message id that holds that call, the turn continues that message (an approval
 * answered, a tool output sent): it is rebuilt first, as for a known continued message.
 * Anything else (a new reply, a reply saved half-way) passes through unchanged.
 */
export function withShownContinuation(
  source: ReadableStream<UIMessageChunk>,
  shown: (messageId: string) => UIMessage | undefined,
): ReadableStream<UIMessageChunk> {
  const reader = source.getReader();
  const held: UIMessageChunk[] = [];
  let decided = false;
  const decide = (next: UIMessageChunk | undefined): UIMessageChunk[] => {
    decided = true;
    const out = [...held];
    held.length = 0;
    if (next === undefined) return out;
    const any = next as unknown as { type: string; toolCallId?: string };
    const start = out.find((candidate) => candidate.type === 'start') as { messageId?: string } | undefined;
    const message = start?.messageId === undefined ? undefined : shown(start.messageId);
    const continues =
      TOOL_RESULT_CHUNKS.has(any.type) &&
      message?.role === 'assistant' &&
      message.parts.some((part) => (part as { toolCallId?: unknown }).toolCallId === any.toolCallId);
    return continues && message !== undefined ? [...chunksRebuilding(message), ...out, next] : [...out, next];
  };
  let queue: UIMessageChunk[] = [];
  return new ReadableStream<UIMessageChunk>({
    async pull(controller) {
      while (queue.length === 0) {
        const { done, value } = await reader.read();
        if (done) {
          if (!decided) queue = decide(undefined);
          if (queue.length === 0) {
            controller.close();
            return;
          }
          break;
        }
        if (decided) queue.push(value);
        else if (value.type === 'start' || value.type === 'start-step') held.push(value);
        else queue = decide(value);
      }
      controller.enqueue(queue.shift() as UIMessageChunk);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}
