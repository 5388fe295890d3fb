import { useChat } from '@ai-sdk/react';
import { type createRouteSessionCallbacks, historyCursor } from 'durable-chat';
import { useChatSession } from 'durable-chat/react';
import { type FormEvent, useEffect, useState } from 'react';
import { type SavedTranscript, saveTranscript } from './transcripts';

interface ChatProps {
  chatId: string;
  baseURL: string;
  taskIdentifier: string;
  route: ReturnType<typeof createRouteSessionCallbacks>;
  saved: SavedTranscript;
}

export function Chat({ chatId, baseURL, taskIdentifier, route, saved }: ChatProps) {
  const [input, setInput] = useState('');
  // The durable session: token, cursor, resume. `historyCursor` says where the saved
  // messages end on the session's stream, so the chat reads on from there.
  const session = useChatSession({
    chatId,
    baseURL,
    taskIdentifier,
    ...route,
    historyCursor: saved.cursor,
  });
  const chat = useChat({
    id: session.id,
    transport: session.transport,
    resume: true, // a reply that was streaming when the page closed carries on
    messages: saved.messages,
    onError: (error) => console.error('[chat error]', error),
  });

  // Saved on every status change (sent, first chunk, ended, stopped, failed), with the cursor
  // read at the same moment. A page closed mid-reply has its cursor at that reply's start: the
  // reply is rebuilt from there when the chat loads again, here or on another device.
  // biome-ignore lint/correctness/useExhaustiveDependencies: saved per status change, not per chunk.
  useEffect(() => {
    if (chat.messages.length === 0) return;
    const cursor = historyCursor(session.source.getState());
    saveTranscript(chat.id, { messages: chat.messages, cursor }).catch((error: unknown) =>
      console.error('[chat error] could not save the transcript', error),
    );
  }, [chat.id, chat.status, session]);

  const busy = chat.status === 'submitted' || chat.status === 'streaming';

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
        <span data-testid="session-status">{session.statusLabel}</span>
      </header>
      <ol className="messages">
        {chat.messages.map((message) => (
          <li key={message.id} className={message.role} data-testid={`message-${message.role}`}>
            {message.parts.map((part, index) => {
              const key = `${message.id}-${index}`;
              return part.type === 'text' ? (
                <p key={key} className="text">
                  {part.text}
                </p>
              ) : null;
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
          placeholder="Say something (try “a long story”)"
          onChange={(event) => setInput(event.target.value)}
        />
        {busy ? (
          <button type="button" data-testid="stop" onClick={() => void chat.stop()}>
            Stop
          </button>
        ) : (
          <button type="submit" data-testid="send">
            Send
          </button>
        )}
      </form>
    </main>
  );
}
