import {
  localStoragePersistence,
  memoryPersistence,
  type PersistedChatRecord,
  type SessionPersistence,
} from '../client/persistence.js';

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

/** A storage that resolves the real one per call, so module import on the server is safe. */
function lateStorage(kind: 'localStorage' | 'sessionStorage'): WebStorage {
  return {
    getItem: (key) => webStorage(kind)?.getItem(key) ?? null,
    setItem: (key, value) => webStorage(kind)?.setItem(key, value),
    removeItem: (key) => webStorage(kind)?.removeItem(key),
  };
}

/** One JSON record per chat in `sessionStorage` (per tab; survives reloads of that tab). */
export function sessionStoragePersistence(options: { prefix?: string } = {}): SessionPersistence {
  return localStoragePersistence({
    prefix: options.prefix ?? DEFAULT_STORAGE_PREFIX,
    storage: lateStorage('sessionStorage'),
  });
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
): ResolvedPersistence {
  if (option === false) return { adapter: undefined, webStorage: undefined };
  if (option === 'memory') return { adapter: memoryPersistence(pageMemory), webStorage: undefined };
  if (option === 'session') return { adapter: sessionStoragePersistence({ prefix }), webStorage: undefined };
  if (option === 'local') {
    return {
      adapter: localStoragePersistence({ prefix, storage: lateStorage('localStorage') }),
      webStorage: { key: (chatId) => prefix + chatId, area: () => webStorage('localStorage') },
    };
  }
  return { adapter: option, webStorage: undefined };
}
