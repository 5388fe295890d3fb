import type { UIMessage } from 'ai';
import type { RemoteFinal } from './chat-session-options.js';

/**
 * `messages` ending as another tab's turn ended on its screen (`final`), or undefined while
 * they do not show that turn yet (it applies later: a tab whose read of the turn has not
 * started or ended). The reply replaces this tab's copy (same id, or the reply after the
 * message it answers); no reply (the owner stopped before its first chunk) removes this tab's
 * copy (its read went past the stop). With no `answers` (an older tab), the copy is replaced;
 * a tab that shows no copy but ends with the message of the turn it found live at load
 * (`foundTurnMessage`: its resume came after the turn ended) adds the reply after it.
 *
 * Only `useDurableChat` and `useFollowTurns` apply another tab's final reply, so this lives
 * outside `ChatSessionHandle`: an app that bundles `useChatSession` alone does not carry it.
 */
export function withRemoteFinal<M extends UIMessage>(
  handle: { readonly foundTurnMessage: UIMessage | undefined },
  messages: M[],
  final: RemoteFinal<M>,
): M[] | undefined {
  const next = withFinalReply(handle.foundTurnMessage, messages, final);
  return next === undefined ? next : inOrderOf(next, final.order);
}

function withFinalReply<M extends UIMessage>(
  found: UIMessage | undefined,
  messages: M[],
  final: RemoteFinal<M>,
): M[] | undefined {
  const { message, answers, order } = final;
  const index = messages.findIndex((existing) => existing.id === message?.id);
  if (message !== undefined && index !== -1) {
    const next = [...messages];
    next[index] = message;
    return next;
  }
  if (answers !== undefined) {
    const asked = messages.findIndex((existing) => existing.id === answers);
    // Not shown yet, or this tab went on past that turn (its copy is no longer the last).
    if (asked === -1) return undefined;
    if (asked < messages.length - 2) return messages;
    const after = messages[asked + 1];
    if (after !== undefined && after.role !== 'assistant') return messages;
    // The owner shows that reply too: another message's (two were sent before the first reply).
    if (after !== undefined && order?.includes(after.id))
      return message === undefined ? messages : [...messages, message];
    const head = messages.slice(0, asked + 1);
    if (message !== undefined) return [...head, message];
    return after === undefined ? messages : head;
  }
  if (message?.role !== 'assistant' || found === undefined || messages.at(-1)?.id !== found.id)
    return messages;
  return [...messages, message];
}

/**
 * `messages` in the owner's order (`order`) when the owner shows each of them: two messages sent
 * before the first reply show together, then the replies, where a tab that followed the turns
 * shows the server's order. The same array when nothing moves or the owner lacks one of them.
 */
function inOrderOf<M extends UIMessage>(messages: M[], order: string[] | undefined): M[] {
  if (order === undefined) return messages;
  const rank = new Map(order.map((id, index) => [id, index]));
  if (messages.some((message) => !rank.has(message.id))) return messages;
  const sorted = [...messages].sort((x, y) => (rank.get(x.id) as number) - (rank.get(y.id) as number));
  return sorted.every((message, index) => message === messages[index]) ? messages : sorted;
}
