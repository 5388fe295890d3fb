import type { ChatTransport, UIMessage, UIMessageChunk } from 'ai';
import type { SessionChatTransport } from '../transport/session-chat-transport.js';

type SendOptions<M extends UIMessage> = Parameters<ChatTransport<M>['sendMessages']>[0];
type ReconnectOptions<M extends UIMessage> = Parameters<ChatTransport<M>['reconnectToStream']>[0];

/** What the transport asks of the page before, during and after a turn. */
export interface TurnGate {
  /** Makes this tab the turn's owner, or throws `TURN_IN_OTHER_TAB`. */
  enter(): Promise<void>;
  /** The send is over (its stream was returned, or it failed). */
  leave(): void;
  /** A stream reached the chat; `onEnd` must be called once when it is over. */
  streamOpened(): () => void;
  /** The turn was stored: tell the other tabs (with the user's message, when there is one). */
  announce(message: UIMessage | undefined): void;
  /** True (once) when `stop()` was called while this send was still in flight. */
  takeStopRequest(): boolean;
}

/**
 * Forwards a stream, ending it (and releasing the reader below) when `signal` aborts.
 * The abort only disconnects: useChat aborts on its own cleanup too (StrictMode, unmount),
 * so stopping the agent is left to an explicit `stop()`.
 */
function relay(
  source: ReadableStream<UIMessageChunk>,
  signal: AbortSignal | undefined,
  onEnd: () => void,
): ReadableStream<UIMessageChunk> {
  const reader = source.getReader();
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    signal?.removeEventListener('abort', onAbort);
    onEnd();
  };
  let controllerRef: ReadableStreamDefaultController<UIMessageChunk> | undefined;
  const onAbort = () => {
    if (ended) return;
    end();
    reader.cancel().catch(() => undefined);
    controllerRef?.close();
  };
  return new ReadableStream<UIMessageChunk>({
    start(controller) {
      controllerRef = controller;
      if (signal?.aborted === true) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
    },
    async pull(controller) {
      if (ended) return;
      try {
        const { done, value } = await reader.read();
        if (ended) return;
        if (done) {
          end();
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        if (ended) return;
        end();
        controller.error(error);
      }
    },
    cancel(reason) {
      end();
      return reader.cancel(reason);
    },
  });
}

/**
 * The `ChatTransport` `useChatSession` hands to `useChat`: the session transport plus tab
 * ownership (a tab that does not own the live turn cannot start one) and StrictMode-safe
 * aborts (an abort disconnects; `stop()` is what stops the agent).
 */
export class GuardedTransport<UI_MESSAGE extends UIMessage = UIMessage> implements ChatTransport<UI_MESSAGE> {
  readonly resumeStreamIsReplay = true;

  constructor(
    private readonly inner: SessionChatTransport<UI_MESSAGE>,
    private readonly gate: TurnGate,
  ) {}

  async sendMessages(options: SendOptions<UI_MESSAGE>): Promise<ReadableStream<UIMessageChunk>> {
    await this.gate.enter();
    try {
      const stream = await this.inner.sendMessages({ ...options, abortSignal: undefined });
      const last = options.messages.at(-1);
      this.gate.announce(options.trigger === 'submit-message' && last?.role === 'user' ? last : undefined);
      if (this.gate.takeStopRequest()) await this.inner.stop(options.chatId);
      return relay(stream, options.abortSignal, this.gate.streamOpened());
    } finally {
      this.gate.leave();
    }
  }

  async reconnectToStream(
    options: ReconnectOptions<UI_MESSAGE>,
  ): Promise<ReadableStream<UIMessageChunk> | null> {
    const stream = await this.inner.reconnectToStream({ ...options, abortSignal: undefined });
    if (stream === null) return null;
    return relay(stream, options.abortSignal, this.gate.streamOpened());
  }
}
