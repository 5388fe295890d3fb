'use client';

import { getToolOrDynamicToolName, isToolOrDynamicToolUIPart, type UIMessage } from 'ai';
import { type FormEvent, useState } from 'react';

// What both chat pages show: the messages (text and tool parts, with Approve / Deny), the
// session's status, the error, and the composer. It knows no hook: `chat.tsx` (useChat +
// useChatSession + useFollowTurns) and `durable-chat.tsx` (useDurableChat) wire it up.

export interface ChatViewProps {
  chatId: string;
  messages: UIMessage[];
  /** A reply is being sent or streams: Stop instead of Send. */
  busy: boolean;
  /** Another tab of this browser drives the chat's live turn: this one shows it read-only. */
  following: boolean;
  statusLabel: string;
  error: Error | undefined;
  send(text: string): void;
  stop(): void;
  regenerate(): void;
  answerApproval(approvalId: string, approved: boolean): void;
}

export function ChatView(props: ChatViewProps) {
  const { chatId, messages, busy, following, statusLabel, error } = props;
  const [input, setInput] = useState('');
  const last = messages[messages.length - 1];

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (input.trim() === '' || busy) return;
    props.send(input);
    setInput('');
  };

  return (
    <main className="chat" data-chat-id={chatId}>
      <header>
        <h1>{chatId}</h1>
        <span data-testid="session-status" data-following={following}>
          {following ? 'following another tab' : statusLabel}
        </span>
      </header>

      <ol className="messages">
        {messages.map((message) => (
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
                        onClick={() => props.answerApproval(part.approval.id, true)}
                      >
                        Approve
                      </button>
                      <button
                        type="button"
                        data-testid="deny"
                        onClick={() => props.answerApproval(part.approval.id, false)}
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

      {error && (
        <p role="alert" data-testid="chat-error">
          {error.message}
        </p>
      )}

      <form onSubmit={submit}>
        <input
          data-testid="composer"
          value={input}
          placeholder="Say something (try “a long story” or “send an email”)"
          onChange={(event) => setInput(event.target.value)}
        />
        {busy ? (
          <button type="button" data-testid="stop" onClick={props.stop}>
            Stop
          </button>
        ) : (
          <button type="submit" data-testid="send" disabled={following}>
            Send
          </button>
        )}
        {!busy && last?.role === 'assistant' && (
          <button type="button" data-testid="regenerate" onClick={props.regenerate}>
            Regenerate
          </button>
        )}
      </form>
    </main>
  );
}
