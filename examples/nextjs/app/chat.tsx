'use client';

import { useChat } from '@ai-sdk/react';
import { lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from 'ai';
import { type createRouteSessionCallbacks, historyCursor } from 'durable-chat';
import { useChatSession, useFollowTurns } from 'durable-chat/react';
import { useEffect, useMemo } from 'react';
import { loadTranscript, saveTranscript } from '../lib/transcripts';
import { ChatView } from './chat-view';

interface ChatProps {
  chatId: string;
  baseURL: string;
  taskIdentifier: string;
  route: ReturnType<typeof createRouteSessionCallbacks>;
  /** The page was opened on this chat (a link): it may already have turns from other devices. */
  linked: boolean;
  onMessages(chatId: string, messages: UIMessage[]): void;
}

export function Chat({ chatId, baseURL, taskIdentifier, route, linked, onMessages }: ChatProps) {
  // The transcript of past turns and where it ends on the session's stream, read when the
  // chat is shown ...
  const history = useMemo(() => loadTranscript(chatId), [chatId]);
  // ... the durable session (token, cursor, resume, tabs) for this chat id, reading on from
  // the transcript's cursor when this browser's own record of the chat is missing or behind ...
  const session = useChatSession({
    chatId,
    baseURL,
    taskIdentifier,
    ...route,
    historyCursor: history.cursor,
  });
  // ... fed to the AI SDK's own useChat: the same id, the session's transport, and
  // `resume: true` so a reply that was streaming when the page reloaded carries on.
  const chat = useChat({
    id: session.id,
    transport: session.transport,
    resume: true,
    messages: history.messages,
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    onError: (error) => console.error('[chat error]', error),
  });
  // Turns another tab of this browser, or another device, starts on this chat show here too.
  useFollowTurns(session, chat, { otherDevices: true });
  // A chat opened from a link takes its session at once, so a reply another device is
  // streaming shows here; a new chat starts its session on the first send.
  const { preload } = session;
  // biome-ignore lint/correctness/useExhaustiveDependencies: once per chat shown, not per render.
  useEffect(() => {
    if (linked) preload().catch((error: unknown) => console.error('[chat error]', error));
  }, [linked, chatId]);

  // Saved whenever no reply is streaming: after a send (so a reload mid-reply still has the
  // user's message, and the resumed reply is rebuilt after it), after a reply ended, was
  // stopped or failed. Keyed by `chat.id`, which always names the chat these messages
  // belong to, also in the render that switches chats. A tab showing another tab's turn
  // leaves saving it to that tab.
  useEffect(() => {
    if (chat.status === 'streaming' || session.isFollowingTurn()) return;
    // The cursor is read with the messages; in the render that switches chats the session is
    // already the next chat's, so its cursor is not this chat's and the stored one stays.
    const cursor = session.id === chat.id ? historyCursor(session.source.getState()) : undefined;
    saveTranscript(chat.id, chat.messages, cursor);
    onMessages(chat.id, chat.messages);
  }, [chat.id, chat.status, chat.messages, onMessages, session]);

  return (
    <ChatView
      chatId={chat.id}
      messages={chat.messages}
      busy={chat.status === 'submitted' || chat.status === 'streaming'}
      following={session.tab.following}
      statusLabel={session.statusLabel}
      error={chat.error}
      send={(text) => void chat.sendMessage({ text })}
      stop={() => void chat.stop()}
      regenerate={() => void chat.regenerate()}
      answerApproval={(id, approved) => void chat.addToolApprovalResponse({ id, approved })}
    />
  );
}
