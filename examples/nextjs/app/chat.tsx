'use client';

import { useChat } from '@ai-sdk/react';
import {
  getToolOrDynamicToolName,
  isToolOrDynamicToolUIPart,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  type UIMessage,
} from 'ai';
import { type createRouteSessionCallbacks, historyCursor } from 'durable-chat';
import { useChatSession, useFollowTurns } from 'durable-chat/react';
import { type FormEvent, useEffect, useMemo, useState } from 'react';
import { loadTranscript, saveTranscript } from '../lib/transcripts';

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
  const [input, setInput] = useState('');
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

  const busy = chat.status === 'submitted' || chat.status === 'streaming';
  const last = chat.messages[chat.messages.length - 1];
  const following = session.tab.following;

  const send = (event: FormEvent) => {
    event.preventDefault();
    if (input.trim() === '' || busy) return;
    void chat.sendMessage({ text: input });
    setInput('');
  };

  return (
    <main className="chat" data-chat-id={chat.id}>
      <header>
        <h1>{chat.id}</h1>
        <span data-testid="session-status" data-following={following}>
          {following ? 'following another tab' : session.statusLabel}
        </span>
      </header>

      <ol className="messages">
        {chat.messages.map((message) => (
          <li key={message.id} className={message.role} data-testid={`message-${message.role}`}>
            {message.parts.map((part, index) => {
              const key = `${message.id}-${index}`;
              if (part.type === 'text') {
                return (
                  <p key={key} className="text">
                    {part.text}
                  </p>
                );
              }
              if (!isToolOrDynamicToolUIPart(part)) return null;
              return (
                <div key={key} className="tool" data-testid="tool-part" data-state={part.state}>
                  <b>{getToolOrDynamicToolName(part)}</b> <span>{part.state}</span>
                  {part.state === 'approval-requested' && (
                    <span>
                      <button
                        type="button"
                        data-testid="approve"
                        onClick={() =>
                          void chat.addToolApprovalResponse({ id: part.approval.id, approved: true })
                        }
                      >
                        Approve
                      </button>
                      <button
                        type="button"
                        data-testid="deny"
                        onClick={() =>
                          void chat.addToolApprovalResponse({ id: part.approval.id, approved: false })
                        }
                      >
                        Deny
                      </button>
                    </span>
                  )}
                </div>
              );
            })}
          </li>
        ))}
      </ol>

      {chat.error && (
        <p role="alert" data-testid="chat-error">
          {chat.error.message}
        </p>
      )}

      <form onSubmit={send}>
        <input
          data-testid="composer"
          value={input}
          placeholder="Say something (try “a long story” or “send an email”)"
          onChange={(event) => setInput(event.target.value)}
        />
        {busy ? (
          <button type="button" data-testid="stop" onClick={() => void chat.stop()}>
            Stop
          </button>
        ) : (
          <button type="submit" data-testid="send" disabled={following}>
            Send
          </button>
        )}
        {!busy && last?.role === 'assistant' && (
          <button type="button" data-testid="regenerate" onClick={() => void chat.regenerate()}>
            Regenerate
          </button>
        )}
      </form>
    </main>
  );
}
