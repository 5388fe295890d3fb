import { useCallback, useEffect, useState } from 'react';

export interface ChatEntry {
  id: string;
  title: string;
  createdAt: number;
  closed?: boolean;
  /** Made with head start on: its first reply comes from the host's head-start route. */
  headStart?: boolean;
}

interface ChatListState {
  chats: ChatEntry[];
  activeId: string;
}

const STORAGE_KEY = 'durable-chat-playground:chats';

function newChat(options: { headStart?: boolean } = {}): ChatEntry {
  // The chat id becomes the session's externalId; it must never start with `session_`.
  const chat: ChatEntry = { id: `chat-${crypto.randomUUID()}`, title: 'New chat', createdAt: Date.now() };
  return options.headStart === true ? { ...chat, headStart: true } : chat;
}

function isChatEntry(value: unknown): value is ChatEntry {
  const entry = value as Partial<ChatEntry> | null;
  return (
    typeof entry?.id === 'string' && typeof entry.title === 'string' && typeof entry.createdAt === 'number'
  );
}

function load(): ChatListState {
  const raw = localStorage.getItem(STORAGE_KEY);
  if (raw !== null) {
    try {
      const parsed = JSON.parse(raw) as { chats?: unknown; activeId?: unknown };
      const chats = Array.isArray(parsed.chats) ? parsed.chats.filter(isChatEntry) : [];
      const first = chats[0];
      if (first !== undefined) {
        const activeId = chats.some((chat) => chat.id === parsed.activeId)
          ? String(parsed.activeId)
          : first.id;
        return { chats, activeId };
      }
    } catch (error) {
      console.warn('playground: discarding an unreadable chat list', error);
    }
  }
  const chat = newChat();
  return { chats: [chat], activeId: chat.id };
}

/** The playground's list of chats, kept in localStorage so a reload lands on the same chat. */
export function useChatList() {
  const [state, setState] = useState(load);

  useEffect(() => {
    localStorage.setItem(STORAGE_KEY, JSON.stringify(state));
  }, [state]);

  const create = useCallback((options: { headStart?: boolean } = {}) => {
    const chat = newChat(options);
    setState((current) => ({ chats: [chat, ...current.chats], activeId: chat.id }));
  }, []);

  const select = useCallback((id: string) => setState((current) => ({ ...current, activeId: id })), []);

  const update = useCallback((id: string, patch: Partial<Omit<ChatEntry, 'id'>>) => {
    setState((current) => {
      const chats = current.chats.map((chat) => (chat.id === id ? { ...chat, ...patch } : chat));
      return { ...current, chats };
    });
  }, []);

  const active = state.chats.find((chat) => chat.id === state.activeId) ?? state.chats[0];
  return { chats: state.chats, active, create, select, update };
}
