export type { HeadStartOptions } from './head-start.js';
export { type SessionCallOptions, SessionChatTransport } from './session-chat-transport.js';
export {
  mergeMetadata,
  payloadExtras,
  type SessionChatTransportOptions,
  withPayloadExtras,
} from './transport-options.js';
export {
  type SendAttribution,
  type TurnMode,
  type TurnOutcome,
  TurnStream,
  type TurnStreamOptions,
} from './turn-stream.js';
