/**
 * durable-chat/devtools: see a durable chat's life, and record it to replay as a test.
 * Import it in development only; nothing here runs until it is mounted or called.
 */
export type {
  RecordedExchange,
  RecordedResponse,
  RecordedStart,
  RecordedToken,
  SessionRecording,
} from '../protocol/recording.js';
export type { RecordingLimits } from './chat-recorder.js';
export {
  type ChatInspection,
  DevtoolsModel,
  type DevtoolsModelOptions,
  type DevtoolsSnapshot,
} from './devtools-model.js';
export {
  DurableChatDevtools,
  type DurableChatDevtoolsProps,
  downloadRecording,
} from './durable-chat-devtools.js';
export { recordSession, type SessionRecorder } from './record-session.js';
export type { TimelineEntry } from './timeline-text.js';
