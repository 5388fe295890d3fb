import type { UIMessage } from 'ai';
import type { SubagentEntry } from 'durable-chat';
import type { SessionChatStatus } from 'durable-chat/react';
import { useEffect, useRef, useState } from 'react';
import { MessageView } from './message-view.js';
import { StatusBadge } from './status-badge.js';
import type { ToolActions } from './tool-part-view.js';

/** What the chat view needs from whichever hook drives the chat. */
export interface ChatController extends ToolActions {
  messages: UIMessage[];
  /** A turn is live: submitted or streaming. */
  busy: boolean;
  status: SessionChatStatus;
  error: Error | undefined;
  closed: boolean;
  /** The agent run serving the chat right now, when known. */
  runId: string | undefined;
  /** Sub-agents of the chat's tool calls, by tool call id. */
  subagents: ReadonlyMap<string, SubagentEntry<UIMessage>>;
  send(text: string): void;
  stop(): void;
  regenerate(): void;
  close(): void;
}

// Prompts that show off each feature of the demo agent.
const EXAMPLES = [
  'Hello!',
  'Tell me a long story',
  'Send an email to the team',
  'Ask me something',
  'Research durable streams',
];

export function ChatView({ title, chat }: { title: string; chat: ChatController }) {
  const [draft, setDraft] = useState('');
  const bottom = useRef<HTMLDivElement>(null);
  const messageCount = chat.messages.length;
  const lastLength = JSON.stringify(chat.messages.at(-1)?.parts ?? []).length;

  // Follow the reply as it streams.
  // biome-ignore lint/correctness/useExhaustiveDependencies: the effect re-runs on content growth on purpose
  useEffect(() => {
    bottom.current?.scrollIntoView({ block: 'end' });
  }, [messageCount, lastLength]);

  const submit = (text: string) => {
    if (text.trim() === '' || chat.busy || chat.closed) return;
    chat.send(text.trim());
    setDraft('');
  };
  const lastIsAssistant = chat.messages.at(-1)?.role === 'assistant';

  return (
    <main className="chat">
      <header>
        <span className="title" title={title}>
          {title}
        </span>
        {chat.runId !== undefined && (
          <span className="muted" data-testid="run-id" title="the agent run serving this chat">
            {chat.runId}
          </span>
        )}
        <StatusBadge status={chat.status} />
        <button
          type="button"
          className="danger"
          data-testid="close-session"
          disabled={chat.closed}
          onClick={chat.close}
        >
          Close session
        </button>
      </header>
      {chat.error && !chat.closed && (
        <div className="error-banner" data-testid="chat-error">
          {chat.error.message}
        </div>
      )}
      <div className="messages" data-testid="messages">
        {chat.messages.map((message) => (
          <MessageView key={message.id} message={message} actions={chat} subagents={chat.subagents} />
        ))}
        <div ref={bottom} />
      </div>
      {!chat.closed && chat.messages.length === 0 && (
        <div className="hints">
          Try:{' '}
          {EXAMPLES.map((example) => (
            <button key={example} type="button" className="example" onClick={() => submit(example)}>
              {example}
            </button>
          ))}
        </div>
      )}
      <form
        className="composer"
        onSubmit={(event) => {
          event.preventDefault();
          submit(draft);
        }}
      >
        <textarea
          data-testid="composer"
          rows={2}
          value={draft}
          disabled={chat.closed}
          placeholder={chat.closed ? 'This session is closed.' : 'Message the agent (Enter to send)'}
          onChange={(event) => setDraft(event.target.value)}
          onKeyDown={(event) => {
            if (event.key === 'Enter' && !event.shiftKey) {
              event.preventDefault();
              submit(draft);
            }
          }}
        />
        {chat.busy ? (
          <button type="button" data-testid="stop" onClick={chat.stop}>
            Stop
          </button>
        ) : (
          <button
            type="submit"
            className="primary"
            data-testid="send"
            disabled={chat.closed || draft.trim() === ''}
          >
            Send
          </button>
        )}
        <button
          type="button"
          data-testid="regenerate"
          disabled={chat.busy || chat.closed || !lastIsAssistant}
          onClick={chat.regenerate}
        >
          Regenerate
        </button>
      </form>
    </main>
  );
}
