import type { SessionClosedError } from '../errors/http-error.js';
import { DEFAULT_TIMEOUT_SECONDS } from '../protocol/limits.js';
import { type ClientEnvironment, resolveEnvironment } from './environment.js';
import type { SessionEvent, SessionEventHandler } from './events.js';
import type { HeadersOption } from './http.js';
import { inspectEvent, isInspected } from './inspection.js';
import {
  type LivenessOptions,
  type ResolvedLivenessOptions,
  resolveLivenessOptions,
} from './liveness-options.js';
import { type ResolvedRetryOptions, type RetryOptions, resolveRetryOptions } from './retry-policy.js';
import type { SessionStore } from './session-store.js';
import { TokenManager } from './token-manager.js';

/** What the append and read engines share with their `SessionClient`. */
export interface ClientContext {
  chatId: string;
  baseURL: string;
  env: ClientEnvironment;
  retry: ResolvedRetryOptions;
  liveness: ResolvedLivenessOptions;
  headers: HeadersOption | undefined;
  store: SessionStore;
  tokens: TokenManager;
  /** `Timeout-Seconds` for `.out` long-polls. */
  streamTimeoutSeconds: number;
  /** URL path segment naming the session: its `session_*` id when known, else the chat id. */
  sessionPath(): string;
  /** Marks the chat closed (terminal) and stops every reader. */
  markClosed(error: SessionClosedError): void;
  /**
   * The server answered 404 for the session: gets it again from `startSession` (new id,
   * token, no cursor). Concurrent calls share one; see `SessionClient.replaceSession`.
   */
  replaceSession(): Promise<void>;
  /** Counts replacements: a reader that sees it move drops its cursor. */
  sessionGeneration(): number;
  emit(event: SessionEvent): void;
}

export interface ClientContextInput {
  baseURL: string;
  chatId: string;
  headers?: HeadersOption;
  fetch?: typeof globalThis.fetch;
  retry?: RetryOptions;
  liveness?: LivenessOptions;
  streamTimeoutSeconds?: number;
  onEvent?: SessionEventHandler;
  environment?: Partial<ClientEnvironment>;
  store: SessionStore;
  fetchToken: () => Promise<string>;
  markClosed: (error: SessionClosedError) => void;
  replaceSession: () => Promise<void>;
  sessionGeneration: () => number;
}

/** Resolves a client's options into its context: environment, retry policy, tokens, events. */
export function createClientContext(input: ClientContextInput): ClientContext {
  const env = resolveEnvironment({ ...input.environment, ...(input.fetch ? { fetch: input.fetch } : {}) });
  // The closures below outlive this call by the chat's whole life: they take what they use,
  // not `input` (a copy of every client option, a few hundred bytes a chat).
  const { chatId, store, onEvent } = input;
  const emit = (event: SessionEvent) => {
    if (isInspected()) inspectEvent(event);
    try {
      onEvent?.(event);
    } catch (error) {
      // A broken telemetry handler must not break the chat; it is reported, not rethrown.
      env.warn(`an onEvent handler threw on "${event.type}": ${String(error)}`);
    }
  };
  const tokens = new TokenManager({
    store,
    now: env.now,
    fetchToken: input.fetchToken,
    onRefreshed: (source) => emit({ type: 'token-refreshed', chatId, source }),
  });
  return {
    chatId,
    baseURL: input.baseURL,
    env,
    retry: resolveRetryOptions(input.retry),
    liveness: resolveLivenessOptions(input.liveness),
    headers: input.headers,
    store,
    tokens,
    streamTimeoutSeconds: input.streamTimeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS,
    sessionPath: () => encodeURIComponent(store.getState().sessionId ?? chatId),
    markClosed: input.markClosed,
    replaceSession: input.replaceSession,
    sessionGeneration: input.sessionGeneration,
    emit,
  };
}
