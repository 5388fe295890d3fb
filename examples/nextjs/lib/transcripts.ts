import type { UIMessage } from 'ai';
import { type HistoryCursor, parseHistoryCursor } from 'durable-chat';

// The transcript of past turns, kept in this browser's localStorage, one entry per chat, with
// its history cursor (where on the session's `.out` the messages end), so a chat loaded from it
// reads on from exactly there. durable-chat persists only what resuming needs (session id,
// token, cursor), not the messages: the app owns its history. A real app would more likely
// save to its database from the same places (see the README).

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

export interface SavedTranscript {
  messages: UIMessage[];
  cursor: HistoryCursor | undefined;
}

export function loadTranscript(chatId: string): SavedTranscript {
  const saved = read<{ messages?: UIMessage[]; cursor?: unknown } | UIMessage[]>(
    `${TRANSCRIPT_PREFIX}${chatId}`,
    [],
  );
  // Entries saved before the cursor was kept are the messages alone.
  if (Array.isArray(saved)) return { messages: saved, cursor: undefined };
  return { messages: saved.messages ?? [], cursor: parseHistoryCursor(saved.cursor) };
}

/** Saves the messages with their cursor; without one (not known for this chat), the stored cursor stays. */
export function saveTranscript(
  chatId: string,
  messages: UIMessage[],
  cursor: HistoryCursor | undefined,
): void {
  const kept = cursor ?? loadTranscript(chatId).cursor;
  window.localStorage.setItem(`${TRANSCRIPT_PREFIX}${chatId}`, JSON.stringify({ messages, cursor: kept }));
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
