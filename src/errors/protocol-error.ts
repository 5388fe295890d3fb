import { DurableChatError } from './durable-chat-error.js';

export type ProtocolErrorCode =
  | 'MALFORMED_BATCH'
  | 'MALFORMED_RECORD'
  | 'UNEXPECTED_RESPONSE'
  | 'EVENT_TOO_LARGE';

/** The server sent something the protocol does not allow. Never retried as-is. */
export class ProtocolError extends DurableChatError {
  override readonly code: ProtocolErrorCode;
  /** `seq_num` of the offending record, when it had a readable one. */
  readonly seqNum: number | undefined;

  constructor(options: { code: ProtocolErrorCode; message: string; seqNum?: number; cause?: unknown }) {
    super({ ...options, retryable: false });
    this.name = 'ProtocolError';
    this.code = options.code;
    this.seqNum = options.seqNum;
  }
}
