import type { UIMessage } from 'ai';
import { ValidationError } from '../errors/validation-error.js';
import type { ChatInputChunk } from './types.js';
import { validateExternalId, validateInputChunk, validateMessageShape } from './validate.js';

/**
 * The head-start wire between the browser (`headStart` on the transport) and the app's route
 * (`createHeadStartHandler`). The browser POSTs the spec's head-start chunk
 * (`headStartChunk`: `handover-prepare` with the history in `headStartMessages`); the route
 * answers with the AI SDK's UI message stream (server-sent events, `data: <chunk>` and a last
 * `data: [DONE]`), into which it puts two transient chunks of its own: the session first,
 * the handover last. Neither reaches `useChat`.
 */

/** The first chunk of a head-start answer: the session the route made for this chat. */
export const HEAD_START_SESSION_CHUNK = 'data-durable-chat-session';
/**
 * The last chunk: the history (with what the route replied) is on `.in` for the agent. Sent
 * after a failed reply too (after its `error` chunk); missing after an `error` chunk, the
 * handover itself failed.
 */
export const HEAD_START_HANDOVER_CHUNK = 'data-durable-chat-handover';

export interface HeadStartSessionData {
  sessionId: string;
  publicAccessToken: string;
}

export interface HeadStartHandoverData {
  /** The handover record's `.in` seq, when the service said. */
  inSeq?: number;
}

/** Status and `code` of the route's answer when the chat's session already exists. */
export const HEAD_START_SESSION_EXISTS = 'SESSION_EXISTS';

/** Checks a parsed head-start request body (the spec's head-start chunk) and returns it typed. */
export function parseHeadStartRequest(value: unknown): {
  chatId: string;
  messages: UIMessage[];
  metadata: unknown;
} {
  validateInputChunk(value);
  const chunk = value as ChatInputChunk;
  if (chunk.kind !== 'message' || chunk.payload.trigger !== 'handover-prepare') {
    throw new ValidationError({
      field: 'payload.trigger',
      message: 'payload.trigger: a head start is a "handover-prepare" message',
    });
  }
  const { chatId, headStartMessages, metadata } = chunk.payload;
  validateExternalId(chatId, 'payload.chatId');
  if (!Array.isArray(headStartMessages) || headStartMessages.length === 0) {
    throw new ValidationError({
      field: 'payload.headStartMessages',
      message: 'payload.headStartMessages: the history, with the new user message last',
    });
  }
  headStartMessages.forEach((message, index) => {
    validateMessageShape(message, `payload.headStartMessages[${index}]`);
  });
  if (headStartMessages[headStartMessages.length - 1]?.role !== 'user') {
    throw new ValidationError({
      field: 'payload.headStartMessages',
      message: 'payload.headStartMessages: the last message must be the user message to answer',
    });
  }
  return { chatId, messages: headStartMessages, metadata };
}
