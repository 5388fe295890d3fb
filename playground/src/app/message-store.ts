import type { UIMessage } from 'ai';

const PREFIX = 'durable-chat-playground:messages:';

/**
 * The page's own copy of each chat's finished messages, so a reload shows the history.
 * The library persists only what resuming needs (session, token, cursor); the live reply
 * itself comes back from the stream, replayed from the start of its turn.
 */
export function loadMessages(chatId: string): UIMessage[] {
  const raw = localStorage.getItem(PREFIX + chatId);
  if (raw === null) return [];
  try {
    const parsed: unknown = JSON.parse(raw);
    if (Array.isArray(parsed)) return parsed as UIMessage[];
    console.warn(`playground: discarding stored messages of ${chatId}: not an array`);
  } catch (error) {
    console.warn(`playground: discarding unreadable stored messages of ${chatId}`, error);
  }
  localStorage.removeItem(PREFIX + chatId);
  return [];
}

export function saveMessages(chatId: string, messages: UIMessage[]): void {
  localStorage.setItem(PREFIX + chatId, JSON.stringify(messages));
}
