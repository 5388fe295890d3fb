import type { ChatTransport, UIMessage, UIMessageChunk } from 'ai';
import type { SessionEvent } from '../../../src/client/events.js';
import type { DevServer } from '../../../src/dev-server/index.js';
import type { SessionChatTransport } from '../../../src/transport/session-chat-transport.js';
import type { SessionChatTransportOptions } from '../../../src/transport/transport-options.js';
import { createTransport, TestChat, transcript } from './dev-server-fixture.js';

/** Passes every call through and keeps a copy of every chunk the AI SDK received. */
export class CapturingTransport implements ChatTransport<UIMessage> {
  readonly resumeStreamIsReplay = true;
  readonly chunks: UIMessageChunk[][] = [];
  private readonly copies: Promise<void>[] = [];

  constructor(readonly inner: SessionChatTransport) {}

  async sendMessages(options: Parameters<ChatTransport<UIMessage>['sendMessages']>[0]) {
    return this.capture(await this.inner.sendMessages(options));
  }

  async reconnectToStream(options: Parameters<ChatTransport<UIMessage>['reconnectToStream']>[0]) {
    const stream = await this.inner.reconnectToStream(options);
    return stream === null ? null : this.capture(stream);
  }

  async settled(): Promise<void> {
    await Promise.all(this.copies);
  }

  private capture(stream: ReadableStream<UIMessageChunk>): ReadableStream<UIMessageChunk> {
    const [forChat, forCopy] = stream.tee();
    const copy: UIMessageChunk[] = [];
    this.chunks.push(copy);
    this.copies.push(
      (async () => {
        const reader = forCopy.getReader();
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) return;
            copy.push(value);
          }
        } catch {
          // The chat side reports the error; the copy just stops.
        }
      })(),
    );
    return forChat;
  }
}

export interface Turn {
  text: string;
  metadata?: Record<string, unknown>;
}

export const SCRIPT: Turn[] = [
  { text: 'first message to echo back', metadata: { repeat: 2 } },
  { text: 'second, shorter one' },
];

export interface ConversationResult {
  transcript: string[];
  /** Chunks per turn, `start.messageId` normalised (ids differ between sessions). */
  chunks: string[][];
  errors: unknown[];
  events: SessionEvent[];
  status: string;
}

function normalise(chunk: UIMessageChunk): string {
  return JSON.stringify(chunk.type === 'start' ? { ...chunk, messageId: '*' } : chunk);
}

/**
 * Runs the script through the AI SDK's Chat on `server`, calling `beforeTurn` (to arm
 * faults) before each send. Fails with `label` when a turn takes longer than `turnTimeoutMs`.
 */
export async function runConversation(
  server: DevServer,
  chatId: string,
  options: {
    beforeTurn?: (turn: number, transport: SessionChatTransport) => void | Promise<void>;
    transport?: Partial<SessionChatTransportOptions>;
    script?: Turn[];
    turnTimeoutMs?: number;
    label?: string;
  } = {},
): Promise<ConversationResult> {
  const { transport, events } = createTransport(server, options.transport);
  const capturing = new CapturingTransport(transport);
  const errors: unknown[] = [];
  const chat = new TestChat({ id: chatId, transport: capturing, onError: (error) => errors.push(error) });
  try {
    const script = options.script ?? SCRIPT;
    for (let turn = 0; turn < script.length; turn++) {
      const step = script[turn] as Turn;
      await options.beforeTurn?.(turn, transport);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`${options.label ?? chatId}: turn ${turn} hung (status ${chat.status})`)),
          options.turnTimeoutMs ?? 8_000,
        );
      });
      try {
        await Promise.race([chat.sendMessage({ text: step.text }, { metadata: step.metadata }), timeout]);
      } finally {
        clearTimeout(timer);
      }
    }
    await capturing.settled();
    return {
      transcript: transcript(chat.messages),
      chunks: capturing.chunks.map((chunks) => chunks.map(normalise)),
      errors,
      events,
      status: chat.status,
    };
  } finally {
    transport.close();
  }
}
