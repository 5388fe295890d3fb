export type { AppendResult } from './append-request.js';
export {
  type ClientEnvironment,
  createWakeSource,
  randomPartId,
  resolveEnvironment,
} from './environment.js';
export type { ReconnectReason, SessionEvent, SessionEventHandler } from './events.js';
export {
  type HistoryCursor,
  historyCursor,
  parseHistoryCursor,
  withHistoryCursor,
} from './history-cursor.js';
export type { HeadersOption } from './http.js';
export {
  DEFAULT_LIVENESS_OPTIONS,
  type LivenessOptions,
  type ResolvedLivenessOptions,
  resolveLivenessOptions,
} from './liveness-options.js';
export type { OutReadEnd, OutReadHandlers, OutReadOptions } from './out-reader.js';
export {
  localStoragePersistence,
  memoryPersistence,
  PERSISTED_RECORD_VERSION,
  type PersistedChatRecord,
  parsePersistedRecord,
  type SessionPersistence,
} from './persistence.js';
export { scopedChatKey, scopedPersistence } from './persistence-scope.js';
export type { ReadOutItem, TrimmedNotice } from './read-out-iterable.js';
export {
  backoffDelay,
  DEFAULT_RETRY_OPTIONS,
  normalizeResetAt,
  type ResolvedRetryOptions,
  type RetryOptions,
  rateLimitDelay,
  resolveRetryOptions,
} from './retry-policy.js';
export {
  type AppendOptions,
  type RunCheck,
  SessionClient,
  type SessionClientOptions,
  type StartSessionInput,
  type StartSessionResult,
} from './session-client.js';
export {
  type ChatSessionState,
  type ConnectionStatus,
  createSessionStore,
  initialSessionState,
  type SessionStore,
} from './session-store.js';
export { TokenManager, type TokenManagerOptions, type TokenSource } from './token-manager.js';
