/** durable-chat/react: hooks over the core. The only entry that imports React. */
export * from '../errors/index.js';
export {
  clearPersistedSessions,
  DEFAULT_STORAGE_PREFIX,
  type PersistenceOption,
  sessionStoragePersistence,
} from '../session/browser-persistence.js';
export type { ChatSessionOptions, RemoteTurn, TabState } from '../session/chat-session-options.js';
export type { OtherDevicesOptions } from '../session/device-follow.js';
export { GuardedTransport } from '../session/guarded-transport.js';
export {
  deriveSessionChatStatus,
  describeSessionChatStatus,
  type SessionChatStatus,
} from '../session/session-chat-status.js';
export type { SessionStateSource } from '../session/session-registry.js';
export { type SessionView, toSessionView } from '../session/session-view.js';
export { shallowEqual } from '../session/shallow-equal.js';
export type { BroadcastChannelLike, LockManagerLike } from '../session/tab-channel.js';
export type { TabCoordinationOptions, TabMode } from '../session/tab-coordinator.js';
export { type UseChatSessionResult, useChatSession } from './use-chat-session.js';
export {
  DEFAULT_RENDER_THROTTLE_MS,
  type UseDurableChatOptions,
  type UseDurableChatResult,
  useDurableChat,
} from './use-durable-chat.js';
export { type FollowableChat, type FollowTurnsOptions, useFollowTurns } from './use-follow-turns.js';
export { useSessionState } from './use-session-state.js';
export { type UseSubagentMessagesResult, useSubagentMessages } from './use-subagent-messages.js';
export { type UseWatchChatOptions, type UseWatchChatResult, useWatchChat } from './use-watch-chat.js';
