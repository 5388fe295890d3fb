import type { UIMessage, UIMessageChunk } from 'ai';
import type { ChatTrigger } from '../../protocol/types.js';
import type { StandardSchemaV1 } from './standard-schema.js';

/** Anything with the AI SDK's `streamText` result shape. */
export interface UIMessageStreamSource {
  toUIMessageStream(options: {
    originalMessages: UIMessage[];
    generateMessageId: () => string;
    onError?: (error: unknown) => string;
  }): ReadableStream<UIMessageChunk> | AsyncIterable<UIMessageChunk>;
}

/** What `run` and `onAction` may return: a `streamText` result or any UIMessageChunk stream. */
export type AgentStream =
  | UIMessageStreamSource
  | ReadableStream<UIMessageChunk>
  | AsyncIterable<UIMessageChunk>;

/** Facts every hook receives. */
export interface AgentHookContext<CLIENT_DATA = unknown> {
  chatId: string;
  sessionId: string;
  runId: string;
  /** The conversation so far (the agent's accumulator). */
  messages: UIMessage[];
  clientData: CLIENT_DATA | undefined;
  continuation: boolean;
  previousRunId: string | undefined;
  /** Turns completed by this run (starts at 0 on every run). */
  turn: number;
}

export interface AgentTurnContext<CLIENT_DATA = unknown> extends AgentHookContext<CLIENT_DATA> {
  trigger: Extract<ChatTrigger, 'submit-message' | 'regenerate-message' | 'handover-prepare'>;
  /**
   * Id of the assistant message this turn answers with: the existing message's id when the
   * turn continues it (a tool approval or output), else a fresh one. Streams whose `start`
   * chunk has no `messageId` get it automatically.
   */
  responseMessageId: string;
  /** Aborted by a `stop` chunk (or a crash/upgrade). Pass it to `streamText`. */
  signal: AbortSignal;
  /**
   * User messages appended to `.in` while this turn streams, removed from the queue and
   * added to `messages`. Call it at a step boundary (e.g. in `prepareStep`) to inject them;
   * messages not taken are handled as the next turns.
   */
  takePendingMessages(): UIMessage[];
  /** Asks for a new run on a newer version: `upgrade-required` is written and the turn re-runs there. */
  requestUpgrade(): void;
  /** Ends the run after this turn (the session stays open; the next append starts a continuation). */
  endRun(): void;
}

export interface AgentActionContext<CLIENT_DATA = unknown, ACTION = unknown>
  extends AgentHookContext<CLIENT_DATA> {
  action: ACTION;
  signal: AbortSignal;
}

export interface HydrateContext<CLIENT_DATA = unknown> {
  chatId: string;
  sessionId: string;
  clientData: CLIENT_DATA | undefined;
  /** The new message of this turn: none or one. */
  incomingMessages: UIMessage[];
  trigger: ChatTrigger;
}

// Hooks use method syntax on purpose: methods are bivariant in their parameters, so an
// agent typed for its own client data still fits the server's `AnyAgent` registry.
type HookResult = void | Promise<void>;

export interface AgentDefinition<CLIENT_DATA = unknown, ACTION = unknown> {
  /** The task identifier clients pass as `taskIdentifier`. */
  id: string;
  /** Validates each payload's `metadata`; a failure completes the turn with no content. */
  clientDataSchema?: StandardSchemaV1<unknown, CLIENT_DATA>;
  /** Validates `action` payloads; without it every action is rejected. */
  actionSchema?: StandardSchemaV1<unknown, ACTION>;
  /** Default idle timeout for this agent (the session's `idleTimeoutInSeconds` wins). */
  idleTimeoutInSeconds?: number;
  /** The run exits after this many turns. Default: unlimited. */
  maxTurns?: number;
  /** Path A: the source of truth for history, called every turn; snapshot and replay are skipped. */
  hydrateMessages?(context: HydrateContext<CLIENT_DATA>): UIMessage[] | Promise<UIMessage[]>;
  onBoot?(context: AgentHookContext<CLIENT_DATA>): HookResult;
  onPreload?(context: AgentHookContext<CLIENT_DATA>): HookResult;
  onChatStart?(context: AgentHookContext<CLIENT_DATA>): HookResult;
  /** Throw to reject the turn (turn-complete with no content). */
  onValidateMessages?(context: AgentHookContext<CLIENT_DATA>): HookResult;
  onTurnStart?(context: AgentTurnContext<CLIENT_DATA>): HookResult;
  onBeforeTurnComplete?(context: AgentHookContext<CLIENT_DATA>): HookResult;
  onTurnComplete?(context: AgentHookContext<CLIENT_DATA>): HookResult;
  onChatSuspend?(context: AgentHookContext<CLIENT_DATA>): HookResult;
  onChatResume?(context: AgentHookContext<CLIENT_DATA>): HookResult;
  onStop?(context: AgentHookContext<CLIENT_DATA> & { message: string | undefined }): HookResult;
  /** Fires on `trigger: 'action'`; a returned stream is piped to `.out`. Not a turn. */
  onAction?(
    context: AgentActionContext<CLIENT_DATA, ACTION>,
  ): AgentStream | undefined | Promise<AgentStream | undefined>;
  /** One turn: return a `streamText` result or a UIMessageChunk stream. */
  run(context: AgentTurnContext<CLIENT_DATA>): AgentStream | Promise<AgentStream>;
}

/** Any agent, whatever its client-data and action types. */
export type AnyAgent = AgentDefinition<unknown, unknown>;

/** Declares an agent; the identity function exists for type inference. */
export function defineAgent<CLIENT_DATA = unknown, ACTION = unknown>(
  definition: AgentDefinition<CLIENT_DATA, ACTION>,
): AgentDefinition<CLIENT_DATA, ACTION> {
  return definition;
}
