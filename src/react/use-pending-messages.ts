import type { Chat } from '@ai-sdk/react';
import { type ChatStatus, generateId, type UIMessage } from 'ai';
import { useCallback, useEffect, useRef, useState } from 'react';
import type { AppendResult } from '../client/append-request.js';
import type { SessionCallOptions } from '../transport/session-chat-transport.js';
import type { ChatSessionHandle } from './chat-session-handle.js';

export interface PendingMessages<UI_MESSAGE extends UIMessage> {
  messages: UI_MESSAGE[];
  send(message: string | UI_MESSAGE, options?: SessionCallOptions): Promise<AppendResult>;
}

/**
 * Steering messages: appended at once (the open stream is left alone), kept aside while
 * the reply streams, then moved into the transcript when it ends. In `'next-turn'` mode
 * the agent answers each one in a follow-up turn, so the chat is marked live from the
 * current cursor and resumed: the follow-up is read from its first record, never missed.
 */
export function usePendingMessages<UI_MESSAGE extends UIMessage>(
  chat: Chat<UI_MESSAGE>,
  status: ChatStatus,
  handle: ChatSessionHandle<UI_MESSAGE>,
  resume: () => void,
  mode: 'next-turn' | 'inject',
): PendingMessages<UI_MESSAGE> {
  const queue = useRef<UI_MESSAGE[]>([]);
  const [messages, setMessages] = useState<UI_MESSAGE[]>([]);

  const flush = useCallback(() => {
    if (queue.current.length === 0 || chat.status === 'submitted' || chat.status === 'streaming') return;
    const taken = mode === 'inject' ? queue.current : queue.current.slice(0, 1);
    queue.current = queue.current.slice(taken.length);
    setMessages(queue.current);
    chat.messages = [...chat.messages, ...taken];
    if (mode === 'inject') return;
    const { client } = handle;
    const state = client.getState();
    if (!state.turnLive) client.store.setState({ turnLive: true, turnStartCursor: state.lastEventId });
    resume();
  }, [chat, handle, resume, mode]);

  useEffect(() => {
    if (status === 'ready') flush();
  }, [status, flush]);

  const send = useCallback(
    async (input: string | UI_MESSAGE, options?: SessionCallOptions) => {
      const message =
        typeof input === 'string'
          ? ({
              id: generateId(),
              role: 'user',
              parts: [{ type: 'text', text: input }],
            } as unknown as UI_MESSAGE)
          : input;
      const result = await handle.sendPendingMessage(message, options);
      queue.current = [...queue.current, message];
      setMessages(queue.current);
      flush();
      return result;
    },
    [handle, flush],
  );

  return { messages, send };
}
