import type { UIMessage } from 'ai';

// The transcript of past turns, kept in this browser's localStorage, one entry per chat.
// durable-chat persists only what resuming needs (session id, token, cursor), not the
// messages: the app owns its history. A real app would more likely save to its database
// from the same places (see the README).

export interface ChatSummary {
  id: string;
  title: string;
}

const TRANSCRIPT_PREFIX = 'example-transcript:';
const CHAT_LIST_KEY = 'example-chats';

function read<T>(key: string, fallback: T): T {
  try {
    const text = window.localStorage.getItem(key);
    return text === null ? fallback : (JSON.parse(text) as T);
  } catch (error) {
    console.warn(`ignoring the unreadable ${key}`, error);
    return fallback;
  }
}

export function loadTranscript(chatId: string): UIMessage[] {
  return read<UIMessage[]>(`${TRANSCRIPT_PREFIX}${chatId}`, []);
}

export function saveTranscript(chatId: string, messages: UIMessage[]): void {
  window.localStorage.setItem(`${TRANSCRIPT_PREFIX}${chatId}`, JSON.stringify(messages));
}

export function loadChatList(): ChatSummary[] {
  return read<ChatSummary[]>(CHAT_LIST_KEY, []);
}

export function saveChatList(chats: ChatSummary[]): void {
  window.localStorage.setItem(CHAT_LIST_KEY, JSON.stringify(chats));
}

/** The first user message's text, shortened: the chat's name in the list. */
export function titleOf(messages: UIMessage[]): string | undefined {
  const first = messages.find((message) => message.role === 'user');
  const text = first?.parts.map((part) => (part.type === 'text' ? part.text : '')).join('') ?? '';
  return text === '' ? undefined : text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
