import type { UIMessage } from 'ai';
import { ValidationError } from '../errors/validation-error.js';
import type { ChatInputChunk, ChatTaskWirePayload } from './types.js';

interface Common {
  chatId: string;
  metadata?: unknown;
}

function payload<M extends UIMessage>(fields: ChatTaskWirePayload<M>): ChatTaskWirePayload<M> {
  // Drop undefined fields so the JSON on the wire stays minimal and stable.
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) out[key] = value;
  return out as unknown as ChatTaskWirePayload<M>;
}

/** A new user message: one message per record, never the history. */
export function userMessageChunk<M extends UIMessage>(options: Common & { message: M }): ChatInputChunk<M> {
  if (options.message.role !== 'user') {
    throw new ValidationError({
      message: 'a submitted message must have role "user"',
      field: 'message.role',
    });
  }
  return {
    kind: 'message',
    payload: payload<M>({
      chatId: options.chatId,
      trigger: 'submit-message',
      message: options.message,
      metadata: options.metadata,
    }),
  };
}

export function stopChunk(message?: string): ChatInputChunk {
  return message === undefined ? { kind: 'stop' } : { kind: 'stop', message };
}

export function actionChunk<M extends UIMessage = UIMessage>(
  options: Common & { action: unknown },
): ChatInputChunk<M> {
  return {
    kind: 'message',
    payload: payload<M>({
      chatId: options.chatId,
      trigger: 'action',
      action: options.action,
      metadata: options.metadata,
    }),
  };
}

export function regenerateChunk<M extends UIMessage = UIMessage>(
  options: Common & { messageId?: string },
): ChatInputChunk<M> {
  return {
    kind: 'message',
    payload: payload<M>({
      chatId: options.chatId,
      trigger: 'regenerate-message',
      messageId: options.messageId,
      metadata: options.metadata,
    }),
  };
}

/** First-turn handover from the app's own route: the only chunk that carries history. */
export function headStartChunk<M extends UIMessage>(
  options: Common & { headStartMessages: M[] },
): ChatInputChunk<M> {
  return {
    kind: 'message',
    payload: payload<M>({
      chatId: options.chatId,
      trigger: 'handover-prepare',
      headStartMessages: options.headStartMessages,
      metadata: options.metadata,
    }),
  };
}

const RESOLVED_TOOL_STATES = new Set([
  'approval-responded',
  'output-available',
  'output-error',
  'output-denied',
]);

type ToolPartLike = {
  type: string;
  toolCallId?: unknown;
  state?: unknown;
  [key: string]: unknown;
};

function isToolPart(part: { type: string }): boolean {
  return part.type.startsWith('tool-') || part.type === 'dynamic-tool';
}

/** Resolved tool parts of an assistant message, trimmed to what the agent overlays. */
export function resolvedToolParts(message: UIMessage): ToolPartLike[] {
  const parts: ToolPartLike[] = [];
  for (const candidate of message.parts) {
    if (!isToolPart(candidate)) continue;
    const part = candidate as unknown as ToolPartLike;
    if (typeof part.state !== 'string' || !RESOLVED_TOOL_STATES.has(part.state)) continue;
    const slim: ToolPartLike = { type: part.type, toolCallId: part.toolCallId, state: part.state };
    // `input` stays so an agent that validates whole UI messages still accepts the part.
    for (const key of ['toolName', 'input', 'approval', 'output', 'errorText'] as const) {
      if (part[key] !== undefined) slim[key] = part[key];
    }
    parts.push(slim);
  }
  return parts;
}

/**
 * A tool approval or a user-supplied tool output: the assistant message slimmed to its
 * resolved tool parts, under the id the agent's `start` chunk gave it.
 */
export function toolResponseChunk<M extends UIMessage>(options: Common & { message: M }): ChatInputChunk<M> {
  const { message } = options;
  if (message.role !== 'assistant') {
    throw new ValidationError({
      message: 'a tool response must be an assistant message',
      field: 'message.role',
    });
  }
  const parts = resolvedToolParts(message);
  if (parts.length === 0) {
    throw new ValidationError({
      message: 'the assistant message has no resolved tool part (approval or output) to send',
      field: 'message.parts',
    });
  }
  const slim = { id: message.id, role: 'assistant', parts } as unknown as M;
  return {
    kind: 'message',
    payload: payload<M>({
      chatId: options.chatId,
      trigger: 'submit-message',
      message: slim,
      metadata: options.metadata,
    }),
  };
}

/** The chunk for the last message of a `submit-message`: user message or tool response. */
export function submitChunk<M extends UIMessage>(options: Common & { message: M }): ChatInputChunk<M> {
  return options.message.role === 'assistant' ? toolResponseChunk(options) : userMessageChunk(options);
}
