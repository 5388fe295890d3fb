import type { ChatSessionState } from '../client/session-store.js';

/** What `useSessionState` reads: the chat's current state and a way to hear about changes. */
export interface SessionStateSource {
  readonly chatId: string;
  getState(): ChatSessionState;
  subscribe(listener: () => void): () => void;
}

/**
 * The mounted chat sessions of this page, by chat id, so any component can read a chat's
 * state by id. When two hooks mount the same chat, the latest one is read.
 */
class SessionRegistry {
  readonly #sources = new Map<string, SessionStateSource[]>();
  readonly #listeners = new Set<() => void>();

  get(chatId: string): SessionStateSource | undefined {
    return this.#sources.get(chatId)?.at(-1);
  }

  register(source: SessionStateSource): () => void {
    const list = this.#sources.get(source.chatId) ?? [];
    list.push(source);
    this.#sources.set(source.chatId, list);
    this.#notify();
    return () => {
      const current = this.#sources.get(source.chatId) ?? [];
      const remaining = current.filter((candidate) => candidate !== source);
      if (remaining.length === 0) this.#sources.delete(source.chatId);
      else this.#sources.set(source.chatId, remaining);
      this.#notify();
    };
  }

  /** Called when a chat id gains or loses its source. */
  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  #notify(): void {
    for (const listener of [...this.#listeners]) listener();
  }
}

export const sessionRegistry = new SessionRegistry();
