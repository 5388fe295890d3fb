const marker = Symbol.for('durable-chat.error');

/**
 * Every stable error code durable-chat reports. Branch on `error.code`, never on the
 * message text or on `instanceof` (two copies of the package may be installed).
 */
export type DurableChatErrorCode =
  // bad data from the wire
  | 'MALFORMED_BATCH'
  | 'MALFORMED_RECORD'
  | 'UNEXPECTED_RESPONSE'
  | 'EVENT_TOO_LARGE'
  // bad input caught before sending
  | 'INVALID_INPUT'
  | 'PAYLOAD_TOO_LARGE'
  // the app's setup (a key, a task id, an option), named with its fix
  | 'SECRET_KEY_REJECTED'
  | 'TASK_NOT_FOUND'
  | 'INVALID_CONFIG'
  | 'STALE_ACCESS_TOKEN'
  | 'TASK_MISMATCH'
  // HTTP answers
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'BAD_REQUEST'
  | 'SESSION_CLOSED'
  | 'RATE_LIMITED'
  | 'SERVER_ERROR'
  | 'HTTP_ERROR'
  // connection and turn outcomes
  | 'NETWORK_ERROR'
  | 'STREAM_DISCONNECTED'
  | 'TURN_REJECTED'
  | 'RUN_GONE'
  | 'TOKEN_UNAVAILABLE'
  | 'ABORTED'
  // several tabs on one chat
  | 'TURN_IN_OTHER_TAB'
  // the dev server's data folder
  | 'DATA_FOLDER_IN_USE'
  | 'DATA_FOLDER_CORRUPT'
  // the first reply from the app's own route (head start)
  | 'HEAD_START_FAILED';

export interface DurableChatErrorOptions {
  code: DurableChatErrorCode;
  message: string;
  retryable?: boolean;
  status?: number;
  cause?: unknown;
}

/** Base class of every error durable-chat throws or reports. */
export class DurableChatError extends Error {
  readonly [marker] = true;
  readonly code: DurableChatErrorCode;
  /** True when repeating the same operation later may succeed. */
  readonly retryable: boolean;
  /** HTTP status when the error came from a response. */
  readonly status: number | undefined;

  constructor({ code, message, retryable = false, status, cause }: DurableChatErrorOptions) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'DurableChatError';
    this.code = code;
    this.retryable = retryable;
    this.status = status;
  }

  /** Works across duplicate installs of the package, unlike `instanceof`. */
  static isInstance(value: unknown): value is DurableChatError {
    return isDurableChatError(value);
  }
}

export function isDurableChatError(value: unknown): value is DurableChatError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[marker] === true;
}
