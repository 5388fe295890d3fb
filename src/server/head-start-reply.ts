import type { UIMessage, UIMessageChunk } from 'ai';

/**
 * What the app's `reply` returns: a `streamText` result, or anything with its
 * `toUIMessageStream` that calls `onFinish` with the message it built. The route needs that
 * message for the handover, and takes it from there rather than rebuilding it: the server
 * entry loads nothing of `ai` at run time.
 */
export interface UIMessageStreamProducer {
  toUIMessageStream(options: {
    originalMessages: UIMessage[];
    generateMessageId: () => string;
    onError?: (error: unknown) => string;
    onFinish?: (event: { responseMessage: UIMessage }) => void | PromiseLike<void>;
  }): ReadableStream<UIMessageChunk> | AsyncIterable<UIMessageChunk>;
}

export type HeadStartReply = UIMessageStreamProducer;

/**
 * The reply as chunks, answering as a new message with `messageId`. `onMessage` gets the
 * message the chunks built once the stream ends (aborted streams end too: read to the end).
 */
export function replyChunks(
  reply: HeadStartReply,
  options: {
    messages: UIMessage[];
    messageId: string;
    onError: (error: unknown) => string;
    onMessage: (message: UIMessage) => void;
  },
): AsyncIterable<UIMessageChunk> {
  if (typeof (reply as { toUIMessageStream?: unknown }).toUIMessageStream !== 'function') {
    throw new TypeError('reply must return a streamText result (an object with toUIMessageStream)');
  }
  const stream = reply.toUIMessageStream({
    originalMessages: options.messages,
    generateMessageId: () => options.messageId,
    onError: options.onError,
    onFinish: ({ responseMessage }) => options.onMessage(responseMessage),
  });
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
    reader.releaseLock();
  }
}

/** The reply's message when it holds content (not only step markers), else undefined. */
export function withContent(message: UIMessage | undefined): UIMessage | undefined {
  if (message === undefined || message.role !== 'assistant') return undefined;
  return message.parts.some((part) => part.type !== 'step-start') ? message : undefined;
}
