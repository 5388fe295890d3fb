'use client';

import type { UIMessage } from 'ai';
import { createRouteSessionCallbacks } from 'durable-chat';
import Link from 'next/link';
import { useSearchParams } from 'next/navigation';
import { useCallback, useEffect, useMemo, useState } from 'react';
import { type ChatSummary, loadChatList, saveChatList, titleOf } from '../lib/transcripts';
import { Chat } from './chat';
import { DurableChat } from './durable-chat';

type Runtime = 'node' | 'edge';

/** Which React path the page shows: the same app on each (`/` and `/durable`). */
export type ChatHook = 'useChat' | 'useDurableChat';

const PAGES: Record<ChatHook, { path: string; label: string }> = {
  useChat: { path: '/', label: 'useChat + useChatSession' },
  useDurableChat: { path: '/durable', label: 'useDurableChat' },
};

const ENDPOINTS: Record<Runtime, string> = {
  node: '/api/chat-session',
  edge: '/api/chat-session-edge',
};

const newChatId = () => `chat-${crypto.randomUUID().slice(0, 8)}`;

// Switching chats rewrites `?chat=` with the History API: Next keeps the page mounted
// (useSearchParams follows), so the chat switches inside one mounted component, exactly
// the case where nothing of the old chat may leak into the new one.
function showChat(chatId: string, mode: 'push' | 'replace' = 'push') {
  const url = `?chat=${encodeURIComponent(chatId)}`;
  if (mode === 'push') window.history.pushState(null, '', url);
  else window.history.replaceState(null, '', url);
}

interface ChatAppProps {
  hook: ChatHook;
  baseURL: string;
  taskIdentifier: string;
}

export function ChatApp({ hook, baseURL, taskIdentifier }: ChatAppProps) {
  const chatId = useSearchParams().get('chat');
  const [chats, setChats] = useState<ChatSummary[] | undefined>(undefined);
  const [runtime, setRuntime] = useState<Runtime>('node');
  // Changes only if this component remounts (the tests check that switching chats does not).
  const [mountId] = useState(() => Math.random().toString(36).slice(2));
  // The chat the page was opened on (a shared link, another device): read at the first render.
  const [linkedChatId] = useState(() =>
    typeof window === 'undefined' ? null : new URLSearchParams(window.location.search).get('chat'),
  );

  // localStorage exists only in the browser: read it after hydration.
  useEffect(() => setChats(loadChatList()), []);
  useEffect(() => {
    if (chatId === null) showChat(newChatId(), 'replace');
  }, [chatId]);

  const route = useMemo(() => createRouteSessionCallbacks({ endpoint: ENDPOINTS[runtime] }), [runtime]);

  const onMessages = useCallback((id: string, messages: UIMessage[]) => {
    const title = titleOf(messages);
    if (title === undefined) return;
    setChats((current) => {
      const list = current ?? [];
      if (list.some((chat) => chat.id === id && chat.title === title)) return current;
      const next = [{ id, title }, ...list.filter((chat) => chat.id !== id)];
      saveChatList(next);
      return next;
    });
  }, []);

  return (
    <div className="app" data-mount-id={mountId}>
      <nav className="sidebar">
        <button type="button" data-testid="new-chat" onClick={() => showChat(newChatId())}>
          New chat
        </button>
        <ul data-testid="chat-list">
          {chats?.map((chat) => (
            <li key={chat.id}>
              <button
                type="button"
                data-chat-id={chat.id}
                aria-current={chat.id === chatId}
                onClick={() => showChat(chat.id)}
              >
                {chat.title}
              </button>
            </li>
          ))}
        </ul>
        <label>
          Chat route{' '}
          <select
            data-testid="runtime"
            value={runtime}
            onChange={(event) => setRuntime(event.target.value as Runtime)}
          >
            <option value="node">Node.js</option>
            <option value="edge">Edge</option>
          </select>
        </label>
        <ul data-testid="hooks">
          {Object.entries(PAGES).map(([name, page]) => (
            <li key={name}>
              <Link href={page.path} aria-current={name === hook ? 'page' : undefined}>
                {page.label}
              </Link>
            </li>
          ))}
        </ul>
        <Link
          href={{ pathname: '/about', query: { back: `${PAGES[hook].path}?chat=${chatId ?? ''}` } }}
          data-testid="about-link"
        >
          About
        </Link>
      </nav>
      {chatId === null || chats === undefined ? (
        <main className="chat">Loading…</main>
      ) : hook === 'useDurableChat' ? (
        <DurableChat
          chatId={chatId}
          baseURL={baseURL}
          taskIdentifier={taskIdentifier}
          route={route}
          onMessages={onMessages}
        />
      ) : (
        <Chat
          chatId={chatId}
          baseURL={baseURL}
          taskIdentifier={taskIdentifier}
          route={route}
          linked={chatId === linkedChatId}
          onMessages={onMessages}
        />
      )}
    </div>
  );
}
