export type { HeadStartOptions } from './head-start.js';
export { createMessageBuilder, type MessageBuilder, type MessageBuilderOptions } from './message-builder.js';
export { type SessionCallOptions, SessionChatTransport } from './session-chat-transport.js';
export {
  type FollowedTurn,
  type FollowerPhase,
  type FollowerState,
  SessionFollower,
  type SessionFollowerOptions,
  watchSession,
} from './session-follower.js';
export {
  readSubagentBatch,
  SUBAGENT_CHUNK_TYPE,
  type SubagentBatch,
  type SubagentEntry,
  SubagentMessages,
} from './subagent-messages.js';
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
