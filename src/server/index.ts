/** durable-chat/server: session management with the secret key. Server runtimes only. */
export * from '../errors/index.js';
export type {
  CreateSessionRequest,
  CreateSessionResponse,
  SessionRow,
  TriggerConfig,
} from '../protocol/types.js';
export type {
  ChatRouteAction,
  ChatRouteCloseResponse,
  ChatRouteErrorBody,
  ChatRouteRequest,
  ChatRouteStartResponse,
  ChatRouteTokenResponse,
} from '../route-client/route-protocol.js';
export {
  type ChatRouteCreateOptions,
  type ChatRouteHandlerOptions,
  createChatRouteHandler,
} from './chat-route-handler.js';
export {
  createHeadStartHandler,
  type HeadStartHandlerOptions,
  type HeadStartReply,
  type HeadStartReplyInput,
  type UIMessageStreamProducer,
} from './head-start-handler.js';
export { DEFAULT_RETRY_OPTIONS, type RetryOptions } from './retry-delay.js';
export type { ChatRouteErrorCode } from './route-responses.js';
export {
  type CreateSessionInput,
  createSessionsApi,
  type SessionsApi,
  type SessionsApiOptions,
  type SessionsRequestOptions,
} from './sessions-api.js';
