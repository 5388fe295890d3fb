import { DurableChatError } from './durable-chat-error.js';

export type ConfigurationErrorCode =
  | 'SECRET_KEY_REJECTED'
  | 'TASK_NOT_FOUND'
  | 'INVALID_CONFIG'
  | 'STALE_ACCESS_TOKEN'
  | 'TASK_MISMATCH';

/**
 * The app's setup is wrong: a secret key the service rejects, a task id it does not serve,
 * an option that cannot work where the code runs. Retrying cannot help; the message names
 * what to change, and `field` the option, when one is to blame.
 */
export class ConfigurationError extends DurableChatError {
  override readonly code: ConfigurationErrorCode;
  readonly field: string | undefined;

  constructor(options: {
    code: ConfigurationErrorCode;
    message: string;
    field?: string;
    status?: number;
    cause?: unknown;
  }) {
    super({ ...options, retryable: false });
    this.name = 'ConfigurationError';
    this.code = options.code;
    this.field = options.field;
  }
}
