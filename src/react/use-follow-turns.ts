import type { ChatStatus, UIMessage } from 'ai';
import { useEffect, useRef } from 'react';
import type { RemoteTurn } from './chat-session-options.js';
import type { UseChatSessionResult } from './use-chat-session.js';
import { sessionHandleOf } from './use-chat-session.js';

/** The parts of `useChat`'s result that showing another tab's turn needs. */
export interface FollowableChat<UI_MESSAGE extends UIMessage = UIMessage> {
  status: ChatStatus;
  messages: UI_MESSAGE[];
  setMessages(messages: UI_MESSAGE[]): void;
  resumeStream(): Promise<void>;
}

/**
 * Shows turns that another tab of this browser starts on the same chat in your own
 * `useChat`, read-only, as `useDurableChat` does: the other tab's user message is added
 * and its reply streams in (`session.status` is `{type: 'streaming', following: true}`).
 *
 * ```tsx
 * const session = useChatSession(options);
 * const chat = useChat({ id: session.id, transport: session.transport, resume: true });
 * useFollowTurns(session, chat);
 * ```
 *
 * The following tab's `useChat` callbacks run for the followed turn too (they belong to
 * `useChat`): return early when `session.isFollowingTurn()` in `onToolCall`, `onFinish`
 * and `sendAutomaticallyWhen`, so only the owner answers; `useDurableChat` does that
 * for you.
 */
export function useFollowTurns<UI_MESSAGE extends UIMessage>(
  session: UseChatSessionResult<UI_MESSAGE>,
  chat: FollowableChat<UI_MESSAGE>,
): void {
  const latest = useRef(chat);
  latest.current = chat;
  const handle = sessionHandleOf(session);
  useEffect(() => {
    let resuming = false;
    const show = (turn: RemoteTurn<UI_MESSAGE>) => {
      const current = latest.current;
      if (resuming || current.status === 'submitted' || current.status === 'streaming') return;
      const { message } = turn;
      if (message !== undefined && !current.messages.some((existing) => existing.id === message.id)) {
        current.setMessages([...current.messages, message]);
      }
      resuming = true;
      handle.followedRequests += 1;
      const done = () => {
        resuming = false;
        handle.followedRequests -= 1;
      };
      current.resumeStream().then(done, (error: unknown) => {
        done();
        handle.client.environment.warn(`following the other tab's turn failed: ${String(error)}`);
      });
    };
    handle.remoteTurnHandler = show;
    return () => {
      if (handle.remoteTurnHandler === show) handle.remoteTurnHandler = undefined;
    };
  }, [handle]);
}
