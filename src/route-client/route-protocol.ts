import { ValidationError } from '../errors/validation-error.js';
import { validateCloseReason, validateExternalId } from '../protocol/validate.js';

/**
 * The chat route protocol between the browser (`createRouteSessionCallbacks`) and the app's
 * server (`createChatRouteHandler`): one POST endpoint, JSON in and out. It carries no
 * task identifier the server uses: the server decides which agent a browser may start. A
 * browser that names one anyway (`start`'s optional `taskIdentifier`) only has it checked
 * against the server's: a different one is refused (`TASK_MISMATCH`), never used.
 */
export type ChatRouteRequest =
  | { action: 'start'; chatId: string; clientData?: unknown; taskIdentifier?: string }
  | { action: 'token'; chatId: string; clientData?: unknown }
  | { action: 'close'; chatId: string; reason?: string };

export type ChatRouteAction = ChatRouteRequest['action'];

export interface ChatRouteStartResponse {
  publicAccessToken: string;
  sessionId: string;
  /**
   * The session row's `currentRunId` (`null`: no run is live). Left out when the session
   * service's answer had no such field, so a client never reads an invented value.
   */
  currentRunId?: string | null;
  /**
   * The create call's `isCached`: `false` when this start created the session. Optional so
   * a route that does not send it still works (the browser then reads `.out` first).
   */
  isCached?: boolean;
}

export interface ChatRouteTokenResponse {
  publicAccessToken: string;
  /** As in `ChatRouteStartResponse`: the token comes from a repeated create, which returns the row. */
  currentRunId?: string | null;
}

export interface ChatRouteCloseResponse {
  closed: true;
}

/** Body of every non-2xx answer of the route. `code` is stable; `error` is for people. */
export interface ChatRouteErrorBody {
  error: string;
  code: string;
  /** With `SESSION_CLOSED`: the reason the session was closed with, when the service said. */
  closedReason?: string | null;
}

/** Chat ids become the session's `externalId` and a URL segment, so they are kept short. */
export const MAX_CHAT_ID_LENGTH = 256;

const ACTIONS: readonly ChatRouteAction[] = ['start', 'token', 'close'];

export function validateChatId(value: unknown, field = 'chatId'): asserts value is string {
  validateExternalId(value, field);
  if ((value as string).length > MAX_CHAT_ID_LENGTH) {
    throw new ValidationError({ field, message: `${field}: at most ${MAX_CHAT_ID_LENGTH} characters` });
  }
}

/**
 * Checks a parsed route body and returns it typed. Unknown fields are dropped, so nothing
 * else the browser adds reaches the session service; `start`'s `taskIdentifier` is kept
 * only for the route to compare with its own.
 */
export function parseChatRouteRequest(value: unknown): ChatRouteRequest {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ValidationError({ field: 'body', message: 'body: must be a JSON object' });
  }
  const body = value as Record<string, unknown>;
  const action = body.action;
  if (typeof action !== 'string' || !ACTIONS.includes(action as ChatRouteAction)) {
    throw new ValidationError({ field: 'action', message: `action: must be one of ${ACTIONS.join(', ')}` });
  }
  validateChatId(body.chatId);
  const chatId = body.chatId;
  if (action === 'close') {
    validateCloseReason(body.reason);
    return body.reason === undefined ? { action, chatId } : { action, chatId, reason: body.reason as string };
  }
  const kind = action as 'start' | 'token';
  const request: ChatRouteRequest =
    body.clientData === undefined
      ? { action: kind, chatId }
      : { action: kind, chatId, clientData: body.clientData };
  if (request.action !== 'start' || body.taskIdentifier === undefined) return request;
  if (typeof body.taskIdentifier !== 'string' || body.taskIdentifier === '') {
    throw new ValidationError({
      field: 'taskIdentifier',
      message: 'taskIdentifier: must be a non-empty string',
    });
  }
  return { ...request, taskIdentifier: body.taskIdentifier };
}
