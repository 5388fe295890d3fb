import type { UIMessage } from 'ai';
import type { ChatTaskWirePayload } from '../../protocol/types.js';
import type { Session } from '../store/session.js';
import { overlayToolParts, trimTrailingAssistant } from './history.js';
import type { TurnTrigger } from './run.js';

export interface AppliedInput {
  messages: UIMessage[];
  /** The assistant message a tool approval or output continues, if any. */
  continued: UIMessage | undefined;
}

/**
 * Applies one turn's input to the run's history: a user message is added (or replaces one
 * with its id), a tool response is overlaid onto its assistant message, regenerate drops
 * trailing assistant messages, a handover seeds an empty history. With `hydrateMessages`
 * (path A) the hook's answer is the history instead.
 */
export async function applyInput(
  session: Session,
  current: UIMessage[],
  payload: ChatTaskWirePayload,
  trigger: TurnTrigger,
  clientData: unknown,
): Promise<AppliedInput> {
  const incoming = payload.message;
  const agent = session.agent;
  if (agent.hydrateMessages !== undefined) {
    const messages = [
      ...(await agent.hydrateMessages({
        chatId: payload.chatId,
        sessionId: session.row.id,
        clientData,
        incomingMessages: incoming === undefined ? [] : [incoming],
        trigger,
      })),
    ];
    // The app's history may predate the tool response: overlay it the same way.
    if (incoming?.role === 'assistant') return { messages, continued: overlayToolParts(messages, incoming) };
    if (incoming !== undefined && !messages.some((message) => message.id === incoming.id)) {
      messages.push(incoming);
    }
    return { messages, continued: undefined };
  }
  const messages = current;
  if (trigger === 'handover-prepare' && payload.headStartMessages !== undefined) {
    return {
      messages: messages.length === 0 ? [...payload.headStartMessages] : messages,
      continued: undefined,
    };
  }
  if (trigger === 'regenerate-message') {
    trimTrailingAssistant(messages);
    return { messages, continued: undefined };
  }
  if (incoming?.role === 'assistant') return { messages, continued: overlayToolParts(messages, incoming) };
  if (incoming !== undefined) {
    const position = messages.findIndex((message) => message.id === incoming.id);
    if (position === -1) messages.push(incoming);
    else messages[position] = incoming;
  }
  return { messages, continued: undefined };
}
