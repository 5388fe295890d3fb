import type { UIMessage, UIMessageChunk } from 'ai';
import type { AgentStream } from '../agents/define-agent.js';

function isStreamSource(value: AgentStream): value is Extract<AgentStream, { toUIMessageStream: unknown }> {
  return typeof (value as { toUIMessageStream?: unknown }).toUIMessageStream === 'function';
}

/**
 * Normalises what an agent returned into an async iterable of chunks. A `streamText`
 * result is asked for its UI message stream with the conversation as `originalMessages`,
 * so an answer to a tool response continues the same assistant message id.
 */
export function toChunkIterable(
  value: AgentStream,
  options: { messages: UIMessage[]; generateMessageId: () => string; onError: (error: unknown) => string },
): AsyncIterable<UIMessageChunk> {
  const stream = isStreamSource(value)
    ? value.toUIMessageStream({
        originalMessages: options.messages,
        generateMessageId: options.generateMessageId,
        onError: options.onError,
      })
    : value;
  if (Symbol.asyncIterator in stream) return stream as AsyncIterable<UIMessageChunk>;
  return readableToIterable(stream);
}

async function* readableToIterable(stream: ReadableStream<UIMessageChunk>): AsyncIterable<UIMessageChunk> {
  const reader = stream.getReader();
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    // Stopping early (stop, crash) must cancel the producer, not leave it streaming.
    await reader.cancel();
    reader.releaseLock();
  }
}
