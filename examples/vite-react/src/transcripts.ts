import type { UIMessage } from 'ai';
import { type HistoryCursor, parseHistoryCursor } from 'durable-chat';

// Past turns live on the app's server (server.js; a database in a real app), so another
// browser or device opening the chat shows them too. With the messages goes the chat's
// history cursor: where on the session's `.out` those messages end, so the chat reads on
// from exactly there when it loads (nothing shown twice, nothing missed).

export interface SavedTranscript {
  messages: UIMessage[];
  cursor: HistoryCursor | undefined;
}

const url = (chatId: string) => `/api/transcripts/${encodeURIComponent(chatId)}`;

export async function loadTranscript(chatId: string): Promise<SavedTranscript> {
  const response = await fetch(url(chatId));
  if (!response.ok) throw new Error(`loading the transcript failed: HTTP ${response.status}`);
  const saved = (await response.json()) as { messages: UIMessage[]; cursor: unknown } | null;
  if (saved === null) return { messages: [], cursor: undefined };
  return { messages: saved.messages, cursor: parseHistoryCursor(saved.cursor) };
}

export async function saveTranscript(chatId: string, transcript: SavedTranscript): Promise<void> {
  const response = await fetch(url(chatId), {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(transcript),
  });
  if (!response.ok) throw new Error(`saving the transcript failed: HTTP ${response.status}`);
}
