import type { UIMessage, UIMessageChunk } from 'ai';
import { abortableDelay, splitText } from './abortable-delay.js';
import { type AgentTurnContext, defineAgent } from './define-agent.js';
import { schemaFromCheck } from './standard-schema.js';

/** Client data the echo agent reads from each payload's `metadata`. */
export interface EchoClientData {
  /** Wait this long between text deltas. */
  delayMs?: number;
  /** Repeat the user's text this many times (joined by a space). */
  repeat?: number;
  userId?: string;
}

export type EchoAction = { type: 'shout' };

const echoClientDataSchema = schemaFromCheck<EchoClientData | undefined>((value) => {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) return 'metadata must be an object';
  const data = value as Record<string, unknown>;
  if (data.delayMs !== undefined && (typeof data.delayMs !== 'number' || data.delayMs < 0)) {
    return 'delayMs must be a non-negative number';
  }
  if (data.repeat !== undefined && (!Number.isInteger(data.repeat) || (data.repeat as number) < 1)) {
    return 'repeat must be a positive integer';
  }
  if (data.userId !== undefined && typeof data.userId !== 'string') return 'userId must be a string';
  return undefined;
});

const echoActionSchema = schemaFromCheck<EchoAction>((value) =>
  typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'shout'
    ? undefined
    : 'the only action is { type: "shout" }',
);

const DELTA_CHARACTERS = 8;

function textOf(message: UIMessage | undefined): string {
  if (message === undefined) return '';
  return message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

function textChunks(id: string, text: string): UIMessageChunk[] {
  const deltas = splitText(text, DELTA_CHARACTERS).map(
    (delta): UIMessageChunk => ({ type: 'text-delta', id, delta }),
  );
  return [{ type: 'text-start', id }, ...deltas, { type: 'text-end', id }];
}

type ToolPart = {
  type: string;
  toolCallId: string;
  state: string;
  input?: unknown;
  output?: unknown;
  approval?: { approved?: boolean };
};

function resolvedToolPart(message: UIMessage): ToolPart | undefined {
  for (const part of message.parts as unknown as ToolPart[]) {
    if (part.type === 'tool-confirm' && part.state === 'approval-responded') return part;
    if (part.type === 'tool-askUser' && part.state === 'output-available') return part;
  }
  return undefined;
}

/** The chunks of one echo turn, decided up front so the behaviour is deterministic. */
function plan(context: AgentTurnContext<EchoClientData | undefined>): UIMessageChunk[] {
  const last = context.messages[context.messages.length - 1];
  const turn = context.messages.length;
  const step = (inner: UIMessageChunk[]): UIMessageChunk[] => [
    { type: 'start-step' },
    ...inner,
    { type: 'finish-step' },
  ];
  const message = (inner: UIMessageChunk[]): UIMessageChunk[] => [
    { type: 'start' },
    ...inner,
    { type: 'finish' },
  ];
  if (last?.role === 'assistant') {
    const part = resolvedToolPart(last);
    if (part === undefined) return message(step(textChunks('text-0', 'Nothing to continue.')));
    if (part.type === 'tool-askUser') {
      const answer = typeof part.output === 'string' ? part.output : JSON.stringify(part.output);
      return message(step(textChunks('text-0', `You answered: ${answer}`)));
    }
    const text = (part.input as { text?: string } | undefined)?.text ?? '';
    if (part.approval?.approved !== true) {
      return message([
        ...step([{ type: 'tool-output-denied', toolCallId: part.toolCallId }]),
        ...step(textChunks('text-1', `Cancelled: ${text}`)),
      ]);
    }
    const output = { confirmed: true, text };
    return message([
      ...step([{ type: 'tool-output-available', toolCallId: part.toolCallId, output }]),
      ...step(textChunks('text-1', `Confirmed: ${text}`)),
    ]);
  }
  const text = textOf(last);
  if (text.startsWith('/approve')) {
    const toolCallId = `call_confirm_${turn}`;
    const input = { text: text.slice('/approve'.length).trim() };
    return message(
      step([
        { type: 'tool-input-start', toolCallId, toolName: 'confirm' },
        { type: 'tool-input-available', toolCallId, toolName: 'confirm', input },
        { type: 'tool-approval-request', approvalId: `approval_${toolCallId}`, toolCallId },
      ]),
    );
  }
  if (text.startsWith('/ask')) {
    const toolCallId = `call_askUser_${turn}`;
    const input = { question: text.slice('/ask'.length).trim() };
    return message(
      step([
        { type: 'tool-input-start', toolCallId, toolName: 'askUser' },
        { type: 'tool-input-available', toolCallId, toolName: 'askUser', input },
      ]),
    );
  }
  const repeat = context.clientData?.repeat ?? 1;
  return message(step(textChunks('text-0', `Echo: ${Array.from({ length: repeat }, () => text).join(' ')}`)));
}

async function* paced(chunks: UIMessageChunk[], delayMs: number, signal: AbortSignal, failAfter?: number) {
  let count = 0;
  for (const chunk of chunks) {
    if (signal.aborted) return;
    if (chunk.type === 'text-delta') {
      if (count > 0) await abortableDelay(delayMs, signal);
      if (failAfter !== undefined && count >= failAfter)
        throw new Error('echo agent: failure requested by /error');
      count += 1;
    }
    yield chunk;
  }
}

/**
 * A deterministic agent for tests: echoes the user's text (`Echo: …`, 8-character deltas),
 * paced by `metadata.delayMs`, repeated by `metadata.repeat`. `/approve x` asks approval
 * for tool `confirm`; `/ask q` waits for a user-supplied `askUser` output; action
 * `{type: 'shout'}` streams `SHOUT`. `/error` fails mid-stream, `/end` ends the run after
 * the turn, `/upgrade` requests an upgrade (on a first run only).
 */
export const echoAgent = defineAgent<EchoClientData | undefined, EchoAction>({
  id: 'echo',
  clientDataSchema: echoClientDataSchema,
  actionSchema: echoActionSchema,
  run(context) {
    const text = textOf(context.messages[context.messages.length - 1]);
    if (text.startsWith('/end')) context.endRun();
    if (text.startsWith('/upgrade') && !context.continuation) context.requestUpgrade();
    const delayMs = context.clientData?.delayMs ?? 0;
    return paced(plan(context), delayMs, context.signal, text.startsWith('/error') ? 1 : undefined);
  },
  onAction({ signal }) {
    const chunks: UIMessageChunk[] = [
      { type: 'start' },
      { type: 'start-step' },
      ...textChunks('text-0', 'SHOUT'),
      { type: 'finish-step' },
      { type: 'finish' },
    ];
    return paced(chunks, 0, signal);
  },
});
