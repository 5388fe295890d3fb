export { type SessionCallOptions, SessionChatTransport } from './session-chat-transport.js';
export {
  mergeMetadata,
  payloadExtras,
  type SessionChatTransportOptions,
  withPayloadExtras,
} from './transport-options.js';
export { type TurnMode, TurnStream, type TurnStreamOptions } from './turn-stream.js';
