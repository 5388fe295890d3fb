import type { UIMessage } from 'ai';
import type { ClientEnvironment } from '../client/environment.js';
import type { SessionEventHandler } from '../client/events.js';
import type { HeadersOption } from '../client/http.js';
import type { SessionPersistence } from '../client/persistence.js';
import type { RetryOptions } from '../client/retry-policy.js';
import type { StartSessionInput, StartSessionResult } from '../client/session-client.js';
import type { ChatInputChunk } from '../protocol/types.js';

export interface SessionChatTransportOptions {
  /** The service (or dev server) origin, e.g. `http://localhost:3030`. */
  baseURL: string;
  /** The chat-agent task's id. */
  taskIdentifier: string;
  /**
   * Creates (or returns) the session on the app's server, where the secret key lives.
   * Called once per chat, on the first send or on `preload`; concurrent calls share one.
   */
  startSession: (input: StartSessionInput) => Promise<StartSessionResult>;
  /** A fresh session token. Default: `startSession` again (create is idempotent per chat). */
  getAccessToken?: (input: { chatId: string }) => Promise<string>;
  /** Typed client data for the agent: sent as `metadata`; per-call metadata wins per key. */
  clientData?: unknown;
  /** Extra headers on every request. */
  headers?: HeadersOption;
  /** Default: `globalThis.fetch`, read per call. */
  fetch?: typeof globalThis.fetch;
  /** Where per-chat records live across reloads. Default: none (memory of this transport only). */
  persistence?: SessionPersistence;
  /** Telemetry; see `SessionEvent`. */
  onEvent?: SessionEventHandler;
  /** `Timeout-Seconds` of each `.out` long-poll (1-600). Default 60. */
  streamTimeoutSeconds?: number;
  /** Append retries and `.out` reconnects; see `RetryOptions` for defaults. */
  retry?: RetryOptions;
  /**
   * Also append `stop` when the returned stream is cancelled without the abort signal
   * (unmount, navigation). Default false: a disconnect leaves the agent running.
   */
  stopOnDisconnect?: boolean;
  /** Timers, clock, wake events, warnings (tests and non-browser hosts). */
  environment?: Partial<ClientEnvironment>;
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
