import type { UIMessage } from 'ai';
import type { RemoteFinal } from './chat-session-options.js';

// What `useDurableChat` and `useFollowTurns` do to the chat's messages, from the state the
// session handle keeps for them. Functions of the handle, not its methods: a class's methods
// are never tree-shaken, and an app that bundles `useChatSession` alone does not call these.

/** The handle's state the functions below read and take. */
interface FollowState {
  readonly foundTurnMessage: UIMessage | undefined;
  refusedMessageId: string | undefined;
  readonly ownSendMessageId: string | undefined;
  readonly ownSendOverlapsTurn: boolean;
  followedReplyId: string | undefined;
  /** News of a turn before one this tab sent since (see `ChatSessionHandle.isEarlierFinal`). */
  isEarlierFinal(final: RemoteFinal<UIMessage>): boolean;
}

/**
 * `messages` ending as another tab's turn ended on its screen (`final`), or undefined while
 * they do not show that turn yet (it applies later: a tab whose read of the turn has not
 * started or ended). The reply replaces this tab's copy (same id, or the reply after the
 * message it answers); no reply (the owner stopped before its first chunk) removes this tab's
 * copy (its read went past the stop). With no `answers` (an older tab), the copy is replaced;
 * a tab that shows no copy but ends with the message of the turn it found live at load
 * (`foundTurnMessage`: its resume came after the turn ended) adds the reply after it.
 */
export function withRemoteFinal<M extends UIMessage>(
  handle: Pick<FollowState, 'foundTurnMessage' | 'isEarlierFinal'>,
  messages: M[],
  final: RemoteFinal<M>,
): M[] | undefined {
  // Kept while this tab went on to continue that reply itself: older than what it shows (dropped).
  if (handle.isEarlierFinal(final as RemoteFinal<UIMessage>)) return messages;
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

/**
 * `messages` without the message of a send refused with `TURN_IN_OTHER_TAB` (another tab won
 * the turn: it was never sent, so the transcript must not show it as sent); the same array
 * when there is none.
 */
export function withoutRefused<M extends UIMessage>(handle: FollowState, messages: M[]): M[] {
  const refused = handle.refusedMessageId;
  if (refused === undefined) return messages;
  handle.refusedMessageId = undefined;
  const kept = messages.filter((message) => message.id !== refused);
  return kept.length === messages.length ? messages : kept;
}

/**
 * True when a send of this tab waited for the turn a resume just showed (`inServerOrder` has
 * something to move; a send that went out while that turn was live stands where it was sent, as
 * `useChat` shows it); otherwise that turn's reply is forgotten here. Asked first, so that the
 * chat is not written (and rendered again) for nothing.
 */
export function needsServerOrder(handle: FollowState): boolean {
  if (
    handle.ownSendMessageId !== undefined &&
    !handle.ownSendOverlapsTurn &&
    handle.followedReplyId !== undefined
  )
    return true;
  handle.followedReplyId = undefined;
  return false;
}

/**
 * `messages` in the order the server saw the turns, called when a followed turn's request
 * ended: a send of this tab that waited for the lock while another tab's turn ended went out
 * after that turn, but the chat had it already, so the followed reply landed after it. That
 * message moves to right after the followed reply. The same array when nothing moves.
 */
export function inServerOrder<M extends UIMessage>(handle: FollowState, messages: M[]): M[] {
  if (!needsServerOrder(handle)) return messages;
  const own = handle.ownSendMessageId as string;
  const reply = handle.followedReplyId as string;
  handle.followedReplyId = undefined;
  const ownIndex = messages.findIndex((message) => message.id === own);
  const replyIndex = messages.findIndex((message) => message.id === reply);
  if (ownIndex === -1 || replyIndex < ownIndex) return messages;
  const ordered = [...messages];
  const [moved] = ordered.splice(ownIndex, 1);
  if (moved !== undefined) ordered.splice(replyIndex, 0, moved);
  return ordered;
}
