import {
  memoryPersistence,
  type PersistedChatRecord,
  type SessionPersistence,
  storagePersistence,
} from '../client/persistence.js';
import { scopedChatKey, scopedKeyPrefix, scopedPersistence } from '../client/persistence-scope.js';

/**
 * Where a chat's record (session id, token, cursor, live-turn start) survives a reload:
 * `'local'` (default, shared by the tabs of the origin), `'session'` (this tab only),
 * `'memory'` (this page only: survives remounts, not reloads), your own adapter (may be
 * async, e.g. a server action), or `false` for nothing.
 */
export type PersistenceOption = 'local' | 'session' | 'memory' | SessionPersistence | false;

export const DEFAULT_STORAGE_PREFIX = 'durable-chat:';

type WebStorage = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

function webStorage(kind: 'localStorage' | 'sessionStorage'): WebStorage | undefined {
  try {
    // Reading the property throws in some sandboxed iframes and with storage disabled.
    return (globalThis as Partial<Record<typeof kind, Storage>>)[kind] ?? undefined;
  } catch {
    return undefined;
  }
}

/** One JSON record per chat in `sessionStorage` (per tab; survives reloads of that tab). */
export function sessionStoragePersistence(options: { prefix?: string } = {}): SessionPersistence {
  // The storage is resolved per call, so module import on the server is safe.
  return storagePersistence(options.prefix ?? DEFAULT_STORAGE_PREFIX, () => webStorage('sessionStorage'));
}

// Page-wide, so a chat that unmounts and mounts again (route change) finds its record.
const pageMemory = new Map<string, PersistedChatRecord>();

export interface ResolvedPersistence {
  adapter: SessionPersistence | undefined;
  /** For `'local'`: the `storage` event key and area another tab writes to. */
  webStorage: { key: (chatId: string) => string; area: () => WebStorage | undefined } | undefined;
}

export function resolvePersistence(
  option: PersistenceOption,
  prefix = DEFAULT_STORAGE_PREFIX,
  scope?: string,
): ResolvedPersistence {
  const scoped = (adapter: SessionPersistence) => scopedPersistence(adapter, scope);
  if (option === false) return { adapter: undefined, webStorage: undefined };
  if (option === 'memory') return { adapter: scoped(memoryPersistence(pageMemory)), webStorage: undefined };
  if (option === 'session')
    return { adapter: scoped(sessionStoragePersistence({ prefix })), webStorage: undefined };
  if (option === 'local') {
    return {
      adapter: scoped(storagePersistence(prefix, () => webStorage('localStorage'))),
      webStorage: {
        key: (chatId) => prefix + scopedChatKey(scope, chatId),
        area: () => webStorage('localStorage'),
      },
    };
  }
  return { adapter: scoped(option), webStorage: undefined };
}

/**
 * Removes persisted chat records (session ids, tokens, cursors) from localStorage,
 * sessionStorage and page memory: those of `scope` (a user id given as `scope` to the hooks),
 * or every record when `scope` is left out. Call it at sign-out, after the chats unmounted
 * (a mounted chat writes its record again as it changes). A custom adapter is not reached:
 * clear it yourself.
 */
export function clearPersistedSessions(scope?: string, options: { prefix?: string } = {}): void {
  const prefix = options.prefix ?? DEFAULT_STORAGE_PREFIX;
  const start = scope === undefined ? prefix : prefix + scopedKeyPrefix(scope);
  for (const kind of ['localStorage', 'sessionStorage'] as const) {
    const area = webStorage(kind) as Storage | undefined;
    if (area === undefined) continue;
    const keys: string[] = [];
    for (let index = 0; index < area.length; index++) {
      const key = area.key(index);
      if (key?.startsWith(start)) keys.push(key);
    }
    for (const key of keys) area.removeItem(key);
  }
  const memoryStart = scope === undefined ? '' : scopedKeyPrefix(scope);
  for (const key of [...pageMemory.keys()]) if (key.startsWith(memoryStart)) pageMemory.delete(key);
}
