import { readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';

/** Builds one UIMessage from its chunks with the AI SDK's own reducer, as they arrive. */
export interface MessageBuilder<UI_MESSAGE extends UIMessage = UIMessage> {
  push(chunk: UIMessageChunk): void;
  /** No more chunks: resolves with the message as the reducer left it (`undefined` if none). */
  end(): Promise<UI_MESSAGE | undefined>;
}

export interface MessageBuilderOptions<UI_MESSAGE extends UIMessage> {
  /** The message a continuation adds to (a tool output's turn continues its message). */
  message?: UI_MESSAGE;
  /** Each state of the message, after every chunk the reducer took. */
  onMessage(message: UI_MESSAGE): void;
  /** A chunk the reducer refused (a delta for a part that never started): the message stops there. */
  onError(error: unknown): void;
}

/**
 * Feeds chunks to `readUIMessageStream` (the reducer `useChat` uses) so a message rebuilt
 * here is the one `useChat` would show. The reducer is asynchronous: states arrive a few
 * microtasks after their chunk, in order.
 */
export function createMessageBuilder<UI_MESSAGE extends UIMessage>(
  options: MessageBuilderOptions<UI_MESSAGE>,
): MessageBuilder<UI_MESSAGE> {
  let controller!: ReadableStreamDefaultController<UIMessageChunk>;
  const stream = new ReadableStream<UIMessageChunk>({
    start(streamController) {
      controller = streamController;
    },
  });
  let latest: UI_MESSAGE | undefined = options.message;
  let closed = false;
  const done = (async () => {
    try {
      for await (const message of readUIMessageStream<UI_MESSAGE>({
        message: options.message,
        stream,
        onError: options.onError,
        terminateOnError: true,
      })) {
        latest = message;
        options.onMessage(message);
      }
    } catch (error) {
      options.onError(error);
    }
    return latest;
  })();
  return {
    push(chunk) {
      if (!closed) controller.enqueue(chunk);
    },
    end() {
      if (!closed) {
        closed = true;
        controller.close();
      }
      return done;
    },
  };
}
