export { ConfigurationError, type ConfigurationErrorCode } from './configuration-error.js';
export { ConnectionError, type ConnectionErrorCode, TurnRejectedError } from './connection-error.js';
export { DataFolderError, type DataFolderErrorCode } from './data-folder-error.js';
export {
  DurableChatError,
  type DurableChatErrorCode,
  type DurableChatErrorOptions,
  isDurableChatError,
} from './durable-chat-error.js';
export { HeadStartError } from './head-start-error.js';
export {
  AuthError,
  HttpError,
  type HttpErrorCode,
  type HttpErrorOptions,
  httpErrorFromResponse,
  PayloadTooLargeError,
  RateLimitedError,
  ServerError,
  SessionClosedError,
} from './http-error.js';
export { ProtocolError, type ProtocolErrorCode } from './protocol-error.js';
export { RunGoneError } from './run-gone-error.js';
export { StreamDisconnectedError } from './stream-disconnected-error.js';
export { TurnInOtherTabError } from './turn-in-other-tab-error.js';
export { ValidationError, type ValidationErrorCode } from './validation-error.js';
