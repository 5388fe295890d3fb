import { DurableChatError } from './durable-chat-error.js';

export type DataFolderErrorCode = 'DATA_FOLDER_IN_USE' | 'DATA_FOLDER_CORRUPT';

/**
 * The dev server cannot use its data folder: another live process holds it
 * (`DATA_FOLDER_IN_USE`), or a session's log is damaged before its last line, which no crash
 * can cause (`DATA_FOLDER_CORRUPT`; a torn last line is expected after a kill and ignored).
 * Retrying cannot help: the message names the folder or file and what to do.
 */
export class DataFolderError extends DurableChatError {
  override readonly code: DataFolderErrorCode;
  /** The folder or file concerned. */
  readonly path: string;

  constructor(options: { code: DataFolderErrorCode; message: string; path: string; cause?: unknown }) {
    super({ code: options.code, message: options.message, retryable: false, cause: options.cause });
    this.name = 'DataFolderError';
    this.code = options.code;
    this.path = options.path;
  }
}
