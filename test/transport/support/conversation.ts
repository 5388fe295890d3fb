import type { ChatTransport, UIMessage, UIMessageChunk } from 'ai';
import type { SessionEvent } from '../../../src/client/events.js';
import type { DevServer } from '../../../src/dev-server/index.js';
import type { SessionChatTransport } from '../../../src/transport/session-chat-transport.js';
import type { SessionChatTransportOptions } from '../../../src/transport/transport-options.js';
import { createTransport, TestChat, transcript } from './dev-server-fixture.js';

/** One `.out` request: when it was sent and when its response ended (undefined: still open). */
export interface OutConnection {
  openedAt: number;
  closedAt: number | undefined;
}

/** The real fetch, noting when each `.out` connection opens and when its body ends. */
export function outConnectionLog(inner: typeof fetch = fetch): {
  fetch: typeof fetch;
  connections: OutConnection[];
} {
  const connections: OutConnection[] = [];
  const wrapped: typeof fetch = async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (!new URL(url).pathname.endsWith('/out')) return inner(input, init);
    const entry: OutConnection = { openedAt: Date.now(), closedAt: undefined };
    connections.push(entry);
    const close = () => {
      entry.closedAt ??= Date.now();
    };
    let response: Response;
    try {
      response = await inner(input, init);
    } catch (error) {
      close();
      throw error;
    }
    if (response.body === null) {
      close();
      return response;
    }
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            close();
            controller.close();
          } else controller.enqueue(value);
        } catch (error) {
          close();
          controller.error(error);
        }
      },
      cancel(reason) {
        close();
        return reader.cancel(reason);
      },
    });
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
  return { fetch: wrapped, connections };
}

/** Passes every call through and keeps a copy of every chunk the AI SDK received. */
export class CapturingTransport implements ChatTransport<UIMessage> {
  readonly resumeStreamIsReplay = true;
  readonly chunks: UIMessageChunk[][] = [];
  /** Per stream: when its first chunk reached the copy, and when the stream ended. */
  readonly timings: { firstChunkAt: number | undefined; closedAt: number | undefined }[] = [];
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
    const timing: (typeof this.timings)[number] = { firstChunkAt: undefined, closedAt: undefined };
    this.timings.push(timing);
    this.copies.push(
      (async () => {
        const reader = forCopy.getReader();
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) return;
            timing.firstChunkAt ??= Date.now();
            copy.push(value);
          }
        } catch {
          // The chat side reports the error; the copy just stops.
        } finally {
          timing.closedAt = Date.now();
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
  /**
   * Chunks per turn, `start.messageId` normalised (ids differ between sessions) and adjacent
   * deltas joined (see `joinDeltas`).
   */
  chunks: string[][];
  /** The same, deltas as they arrived (exact only with `coalesceDeltas: false`). */
  rawChunks: string[][];
  errors: unknown[];
  events: SessionEvent[];
  status: string;
  /** Per stream: ms from its first chunk to its end (0: everything arrived at once). */
  spreadMs: number[];
  /** `.out` connections opened before a stream ended and still open 1 s after it. */
  lingering: number;
}

/** A conversation's `.out` connections still open 1 s after the stream they served ended. */
function lingeringConnections(connections: OutConnection[], closes: number[]): number {
  let lingering = 0;
  for (const closedAt of closes) {
    for (const connection of connections) {
      if (connection.openedAt > closedAt) continue;
      if (connection.closedAt === undefined || connection.closedAt > closedAt + 1_000) lingering++;
    }
  }
  return lingering;
}

function normalise(chunk: UIMessageChunk): string {
  return JSON.stringify(chunk.type === 'start' ? { ...chunk, messageId: '*' } : chunk);
}

/**
 * Adjacent deltas of one part joined: the transport merges deltas that arrive together
 * (`coalesceDeltas`), so where the boundaries fall depends on timing; the text, and every
 * other chunk, must still match exactly (a lost or repeated delta changes the joined text).
 */
export function joinDeltas(chunks: UIMessageChunk[]): UIMessageChunk[] {
  const joined: UIMessageChunk[] = [];
  for (const chunk of chunks) {
    const last = joined[joined.length - 1];
    if (
      last !== undefined &&
      (chunk.type === 'text-delta' || chunk.type === 'reasoning-delta') &&
      last.type === chunk.type &&
      last.id === chunk.id &&
      last.providerMetadata === undefined &&
      chunk.providerMetadata === undefined
    ) {
      joined[joined.length - 1] = { ...last, delta: last.delta + chunk.delta };
      continue;
    }
    joined.push(chunk);
  }
  return joined;
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
  const log = outConnectionLog(options.transport?.fetch ?? fetch);
  const { transport, events } = createTransport(server, { ...options.transport, fetch: log.fetch });
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
    // The last stream's reader must let go within 1 s too (the transport is still open).
    const deadline = Date.now() + 1_000;
    while (log.connections.some((connection) => connection.closedAt === undefined) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const closes = capturing.timings.flatMap((timing) =>
      timing.closedAt === undefined ? [] : [timing.closedAt],
    );
    return {
      spreadMs: capturing.timings.map((timing) =>
        timing.firstChunkAt === undefined || timing.closedAt === undefined
          ? 0
          : timing.closedAt - timing.firstChunkAt,
      ),
      lingering: lingeringConnections(log.connections, closes),
      transcript: transcript(chat.messages),
      chunks: capturing.chunks.map((chunks) => joinDeltas(chunks).map(normalise)),
      rawChunks: capturing.chunks.map((chunks) => chunks.map(normalise)),
      errors,
      events,
      status: chat.status,
    };
  } finally {
    transport.close();
  }
}
