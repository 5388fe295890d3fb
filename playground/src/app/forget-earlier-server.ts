import { DEFAULT_STORAGE_PREFIX } from 'durable-chat/react';
import type { PlaygroundConfig } from './playground-api.js';

const PLAYGROUND_PREFIX = 'durable-chat-playground:';
const INSTANCE_KEY = `${PLAYGROUND_PREFIX}instance`;

/**
 * The local dev server keeps sessions in memory, so a restarted playground knows none of
 * the chats this browser remembers: their session ids and cursors would only earn 404s.
 * When the host is a new instance, forget them (chat list, messages, session records).
 * A real deployment keeps its sessions, so nothing is forgotten in remote mode.
 */
export function forgetEarlierServer(config: PlaygroundConfig, storage: Storage = localStorage): boolean {
  const previous = storage.getItem(INSTANCE_KEY);
  if (config.mode !== 'local' || previous === config.instance) return false;
  const stale: string[] = [];
  for (let index = 0; index < storage.length; index++) {
    const key = storage.key(index);
    if (key?.startsWith(PLAYGROUND_PREFIX) || key?.startsWith(DEFAULT_STORAGE_PREFIX)) stale.push(key);
  }
  for (const key of stale) storage.removeItem(key);
  storage.setItem(INSTANCE_KEY, config.instance);
  return previous !== null;
}
