import { DurableChatError } from './durable-chat-error.js';

export type ValidationErrorCode = 'INVALID_INPUT' | 'PAYLOAD_TOO_LARGE';

/** Input rejected locally, before anything was sent. Fix the input; retrying cannot help. */
export class ValidationError extends DurableChatError {
  override readonly code: ValidationErrorCode;
  /** The offending field, as a dotted path (`triggerConfig.maxAttempts`). */
  readonly field: string | undefined;
  /** For size errors: measured and allowed bytes. */
  readonly bytes: number | undefined;
  readonly limit: number | undefined;

  constructor(options: {
    code?: ValidationErrorCode;
    message: string;
    field?: string;
    bytes?: number;
    limit?: number;
  }) {
    super({ code: options.code ?? 'INVALID_INPUT', message: options.message, retryable: false });
    this.name = 'ValidationError';
    this.code = options.code ?? 'INVALID_INPUT';
    this.field = options.field;
    this.bytes = options.bytes;
    this.limit = options.limit;
  }
}
