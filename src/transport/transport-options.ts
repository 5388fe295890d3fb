import type { UIMessage } from 'ai';
import type { SessionClientOptions } from '../client/session-client.js';
import type { ChatInputChunk } from '../protocol/types.js';
import type { HeadStartOptions } from './head-start.js';

/** The transport takes every `SessionClient` option except the chat id (it serves many chats). */
export interface SessionChatTransportOptions extends Omit<SessionClientOptions, 'chatId'> {
  /**
   * Also append `stop` when the returned stream is cancelled without the abort signal
   * (unmount, navigation). Default false: a disconnect leaves the agent running.
   */
  stopOnDisconnect?: boolean;
  /**
   * Merge text and reasoning deltas of one part that arrive together, while the consumer
   * has not read them yet, into one chunk (the final message is the same; a catch-up or a
   * fast stream then costs the AI SDK reducer and React far fewer updates, and a chunk is
   * never held back to wait for another). Default true; false hands over one chunk per record.
   */
  coalesceDeltas?: boolean;
  /**
   * Head start: the first turn of a new chat (no session yet) goes to the app's own route
   * (`createHeadStartHandler` of `durable-chat/server`), which streams the reply at once while
   * the agent's run boots and then hands the chat over; every later turn goes to `.in`.
   * Default: none (every turn goes to `.in`). See docs/head-start.md.
   */
  headStart?: HeadStartOptions;
}

const RESERVED_BODY_FIELDS = new Set(['chatId', 'trigger', 'message']);

/** `body` fields that may join the wire payload: never `chatId`, `trigger` or `message`. */
export function payloadExtras(body: object | undefined): Record<string, unknown> {
  const extras: Record<string, unknown> = {};
  if (body === undefined || body === null) return extras;
  for (const [key, value] of Object.entries(body)) {
    if (!RESERVED_BODY_FIELDS.has(key) && value !== undefined) extras[key] = value;
  }
  return extras;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Transport `clientData` merged with per-call metadata; the per-call value wins. */
export function mergeMetadata(clientData: unknown, metadata: unknown): unknown {
  if (metadata === undefined) return clientData;
  if (isPlainObject(clientData) && isPlainObject(metadata)) return { ...clientData, ...metadata };
  return metadata;
}

/** The chunk with the call's `body` fields joined to its payload (the chunk's own fields win). */
export function withPayloadExtras<M extends UIMessage>(
  chunk: ChatInputChunk<M>,
  body: object | undefined,
): ChatInputChunk<M> {
  if (chunk.kind !== 'message') return chunk;
  const extras = payloadExtras(body);
  if (Object.keys(extras).length === 0) return chunk;
  return { kind: 'message', payload: { ...extras, ...chunk.payload } };
}
