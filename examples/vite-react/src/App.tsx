import { createRouteSessionCallbacks } from 'durable-chat';
import { useEffect, useState } from 'react';
import { Chat } from './Chat';
import { loadTranscript, type SavedTranscript } from './transcripts';

// The browser half of the chat route (server.js): starts the session, fresh tokens, close.
const route = createRouteSessionCallbacks({ endpoint: '/api/chat-session' });

const newChatId = () => `chat-${crypto.randomUUID().slice(0, 8)}`;

function chatIdFromUrl(): string {
  const id = new URLSearchParams(window.location.search).get('chat');
  if (id !== null && id !== '') return id;
  const created = newChatId();
  window.history.replaceState(null, '', `?chat=${encodeURIComponent(created)}`);
  return created;
}

export function App({ baseURL, taskIdentifier }: { baseURL: string; taskIdentifier: string }) {
  const [chatId, setChatId] = useState(chatIdFromUrl);
  // The transcript is loaded before the chat mounts: `useChat` takes its messages, and the
  // session its cursor, once, when the chat is created.
  const [loaded, setLoaded] = useState<{ chatId: string; transcript: SavedTranscript } | Error>();

  useEffect(() => {
    let current = true;
    loadTranscript(chatId).then(
      (transcript) => current && setLoaded({ chatId, transcript }),
      (error: Error) => current && setLoaded(error),
    );
    return () => {
      current = false;
    };
  }, [chatId]);

  useEffect(() => {
    const onPop = () => setChatId(chatIdFromUrl());
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);

  const startNewChat = () => {
    const id = newChatId();
    window.history.pushState(null, '', `?chat=${encodeURIComponent(id)}`);
    setChatId(id);
  };

  return (
    <div className="app">
      <nav>
        <button type="button" data-testid="new-chat" onClick={startNewChat}>
          New chat
        </button>
      </nav>
      {loaded instanceof Error ? (
        <p role="alert">{loaded.message}</p>
      ) : loaded?.chatId === chatId ? (
        // Keyed by chat: another chat mounts afresh with its own transcript.
        <Chat
          key={chatId}
          chatId={chatId}
          baseURL={baseURL}
          taskIdentifier={taskIdentifier}
          route={route}
          saved={loaded.transcript}
        />
      ) : (
        <main className="chat">Loading…</main>
      )}
    </div>
  );
}
