'use client';

import { lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from 'ai';
import { type createRouteSessionCallbacks, historyCursor } from 'durable-chat';
import { useDurableChat } from 'durable-chat/react';
import { useMemo } from 'react';
import { loadTranscript, saveTranscript } from '../lib/transcripts';
import { ChatView } from './chat-view';

interface DurableChatProps {
  chatId: string;
  baseURL: string;
  taskIdentifier: string;
  route: ReturnType<typeof createRouteSessionCallbacks>;
  onMessages(chatId: string, messages: UIMessage[]): void;
}

// The same chat as `chat.tsx` on the all-in-one hook: `useDurableChat` is useChat and
// useChatSession in one call, and follows the turns other tabs of this browser start.
export function DurableChat({ chatId, baseURL, taskIdentifier, route, onMessages }: DurableChatProps) {
  // The transcript of past turns and where it ends on the session's stream, read when the
  // chat is shown (the hook reads both once per chat id).
  const history = useMemo(() => loadTranscript(chatId), [chatId]);
  const chat = useDurableChat({
    chatId,
    baseURL,
    taskIdentifier,
    ...route,
    messages: history.messages,
    historyCursor: history.cursor,
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    // Runs once per reply, in the tab that sent it, for the chat shown: also for a reply that
    // finished after you came back to it (then `messages` has your message again, although it
    // was never saved). Not for a stopped reply (`isAbort`), a failed one, or a chat you left.
    onFinish: ({ messages, isAbort, isError }) => {
      if (isAbort || isError) return;
      saveTranscript(chatId, messages, historyCursor(chat.session.source.getState()));
      onMessages(chatId, messages);
    },
    onError: (error) => console.error('[chat error]', error),
  });

  return (
    <ChatView
      chatId={chat.id}
      messages={chat.messages}
      busy={chat.status === 'submitted' || chat.status === 'streaming'}
      following={chat.session.tab.following}
      statusLabel={chat.statusLabel}
      error={chat.error}
      send={(text) => void chat.sendMessage({ text })}
      stop={() => void chat.stop()}
      regenerate={() => void chat.regenerate()}
      answerApproval={(id, approved) => void chat.addToolApprovalResponse({ id, approved })}
    />
  );
}
