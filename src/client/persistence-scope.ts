import type { SessionPersistence } from './persistence.js';

/**
 * The key a chat's record is stored under for a scope (the signed-in user): another scope's
 * key never matches, so a stored token is only ever used by the scope that stored it.
 * `encodeURIComponent` leaves no `:` in the scope, so the chat id cannot shift the boundary.
 */
export function scopedChatKey(scope: string | undefined, chatId: string): string {
  return scope === undefined ? chatId : `${scopedKeyPrefix(scope)}${chatId}`;
}

/** What every key of one scope starts with. */
export function scopedKeyPrefix(scope: string): string {
  return `@${encodeURIComponent(scope)}:`;
}

/**
 * An adapter whose records are kept apart per scope: pass the signed-in user's id, so
 * another user of the same browser opening the same chat id starts (and is authorized)
 * afresh instead of adopting the first user's token. Its records keep the session token
 * (`SessionPersistence.scope`), so a reload resumes without a request to the app's route.
 */
export function scopedPersistence(
  adapter: SessionPersistence,
  scope: string | undefined,
): SessionPersistence {
  if (scope === undefined) return adapter;
  return {
    ...(adapter.id === undefined ? {} : { id: adapter.id }),
    scope,
    load: (chatId) => adapter.load(scopedChatKey(scope, chatId)),
    save: (chatId, record) => adapter.save(scopedChatKey(scope, chatId), record),
    remove: (chatId) => adapter.remove(scopedChatKey(scope, chatId)),
  };
}
