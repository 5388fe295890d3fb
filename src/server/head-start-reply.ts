import type { UIMessage, UIMessageChunk } from 'ai';

/** Anything with the AI SDK's `streamText` result shape (`toUIMessageStream`). */
export interface UIMessageStreamProducer {
  toUIMessageStream(options: {
    originalMessages: UIMessage[];
    generateMessageId: () => string;
    onError?: (error: unknown) => string;
  }): ReadableStream<UIMessageChunk> | AsyncIterable<UIMessageChunk>;
}

/** What the app's `reply` returns: a `streamText` result, or any UIMessageChunk stream. */
export type HeadStartReply =
  | UIMessageStreamProducer
  | ReadableStream<UIMessageChunk>
  | AsyncIterable<UIMessageChunk>;

function isProducer(value: HeadStartReply): value is UIMessageStreamProducer {
  return typeof (value as { toUIMessageStream?: unknown }).toUIMessageStream === 'function';
}

/** The reply as chunks; a `streamText` result answers as a new message with `messageId`. */
export function replyChunks(
  reply: HeadStartReply,
  options: { messages: UIMessage[]; messageId: string; onError: (error: unknown) => string },
): AsyncIterable<UIMessageChunk> {
  const stream = isProducer(reply)
    ? reply.toUIMessageStream({
        originalMessages: options.messages,
        generateMessageId: () => options.messageId,
        onError: options.onError,
      })
    : reply;
  if (Symbol.asyncIterator in stream) return stream as AsyncIterable<UIMessageChunk>;
  return iterate(stream);
}

async function* iterate(stream: ReadableStream<UIMessageChunk>): AsyncIterable<UIMessageChunk> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    // Leaving early (the browser went away) must stop the model, not leave it streaming.
    await reader.cancel();
    reader.releaseLock();
  }
}

/**
 * The assistant message the chunks build, as the browser's `useChat` builds it, or undefined
 * when they hold no content (nothing but markers): the agent must then not be told of a reply.
 */
export async function reduceReply(
  chunks: readonly UIMessageChunk[],
  onError: (error: unknown) => void,
): Promise<UIMessage | undefined> {
  let next = 0;
  const stream = new ReadableStream<UIMessageChunk>(
    {
      pull(controller) {
        const chunk = chunks[next++];
        if (chunk === undefined) controller.close();
        else controller.enqueue(chunk);
      },
    },
    { highWaterMark: 0 },
  );
  // Loaded here, not at the top: the rest of durable-chat/server needs no `ai` at run time, and
  // an app with a head-start route has it (its reply is made with it).
  const { readUIMessageStream } = await import('ai');
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream({ stream, onError })) last = message;
  if (last === undefined || !last.parts.some((part) => part.type !== 'step-start')) return undefined;
  return last;
}
