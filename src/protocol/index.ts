export {
  HEAD_START_HANDOVER_CHUNK,
  HEAD_START_SESSION_CHUNK,
  HEAD_START_SESSION_EXISTS,
  type HeadStartHandoverData,
  type HeadStartSessionData,
  parseHeadStartRequest,
} from './head-start.js';
export {
  COMMAND_TRIM,
  CONTROL,
  EVENT_STREAM,
  HEADER,
  LEGACY_CONTROL_PREFIX,
  RECORD_HEADER,
  STREAM_VERSION_V2,
} from './headers.js';
export {
  actionChunk,
  headStartChunk,
  regenerateChunk,
  resolvedToolParts,
  stopChunk,
  submitChunk,
  toolResponseChunk,
  userMessageChunk,
} from './input-chunks.js';
export * from './limits.js';
export {
  commandRecord,
  controlRecord,
  dataRecord,
  legacyControlRecord,
  turnCompleteRecord,
} from './record-builders.js';
export type {
  ExchangeKind,
  RecordedEntry,
  RecordedEvent,
  RecordedExchange,
  RecordedResponse,
  RecordedStart,
  RecordedToken,
  SessionRecording,
} from './recording.js';
export {
  type ClassifiedRecord,
  type CommandRecord,
  type ControlName,
  type ControlRecord,
  classifyRecord,
  type DataRecord,
  isTurnComplete,
  isUpgradeRequired,
  type MalformedRecord,
} from './records.js';
export {
  createOutStreamDecoder,
  type OutStreamDecoder,
  type OutStreamEvent,
  parseBatchData,
} from './sse-decoder.js';
export {
  batchEventId,
  encodeBatchEvent,
  encodeDoneEvent,
  encodeErrorEvent,
  encodePingEvent,
} from './sse-encoder.js';
export { readTokenClaims, runIdFromScopes, tokenExpiresAt } from './token-claims.js';
export type * from './types.js';
export { utf8ByteLength } from './utf8.js';
export {
  type AppendSize,
  measureAppend,
  serializeAppend,
  validateCloseReason,
  validateCreateSessionRequest,
  validateExternalId,
  validateIdleTimeout,
  validateInputChunk,
  validateLastEventId,
  validateMaxAttempts,
  validateMessageShape,
  validatePartId,
  validateTags,
  validateTimeoutSeconds,
} from './validate.js';
