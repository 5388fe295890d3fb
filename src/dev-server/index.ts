/** durable-chat/dev-server: the local session server (Node only). */
export * from '../errors/index.js';
export type { SessionRecording } from '../protocol/recording.js';
export {
  type AgentActionContext,
  type AgentDefinition,
  type AgentHookContext,
  type AgentStream,
  type AgentTurnContext,
  type AnyAgent,
  defineAgent,
  type HydrateContext,
  type UIMessageStreamSource,
} from './agents/define-agent.js';
export { createDemoAgent, type DemoAgentOptions, demoAgent } from './agents/demo-agent.js';
export { type EchoAction, type EchoClientData, echoAgent } from './agents/echo-agent.js';
export { type StandardSchemaV1, schemaFromCheck } from './agents/standard-schema.js';
export { createDevServerApp, type DevServerApp, type DevServerRoutes } from './app.js';
export type {
  AppendFault,
  Faults,
  OutConnectionPlan,
  RateLimitResetFormat,
  TurnFault,
  WireOptions,
} from './faults.js';
export type { SessionInfo } from './inspect.js';
export type { DevServerLogger } from './logger.js';
export { DEFAULT_TRIM_DELAY_MS, type DevServerOptions, generateSecretKey } from './options.js';
export {
  type ReplayOptions,
  type ReplayServer,
  replayRecording,
  type UnmatchedRequest,
} from './replay/replay-recording.js';
export { DIVERGED_PREFIX } from './runs/diverge-answer.js';
export { type DevServer, type StartDevServerOptions, startDevServer } from './start-dev-server.js';
export { DirectoryObjectStore, MemoryObjectStore, type ObjectStore } from './store/object-store.js';
export type { RunState } from './store/session.js';
