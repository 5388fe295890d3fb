export {
  createRouteSessionCallbacks,
  type RouteSessionCallbacks,
  type RouteSessionCallbacksOptions,
} from './create-route-session-callbacks.js';
export {
  type ChatRouteAction,
  type ChatRouteCloseResponse,
  type ChatRouteErrorBody,
  type ChatRouteRequest,
  type ChatRouteStartResponse,
  type ChatRouteTokenResponse,
  type ChatRouteWatchResponse,
  MAX_CHAT_ID_LENGTH,
  parseChatRouteRequest,
  validateChatId,
} from './route-protocol.js';
