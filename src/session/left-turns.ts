import type { ChatSessionState } from '../client/session-store.js';

/**
 * Chats this page let go of (unmount, chat switch, a reload) while it drove their live turn, by
 * session identity, with the cursor it had read by then. When the chat is shown again and the
 * live turn started no later than that cursor, it is the same turn: this page made it, so it
 * answers it (`useDurableChat` calls `onFinish`), even while the tabs are still settling who
 * owns it, or another tab took it over meanwhile.
 */
const turnsLeftMidway = new Map<string, number | undefined>();

/**
 * Where a reload keeps them for the page that replaces it: this tab's `sessionStorage` (a
 * reload keeps it; other tabs never see it). Without it, a page reloaded mid-reply while a
 * second tab showed the chat followed the turn that second tab took over, and no tab saved it.
 */
const RELOAD_KEY = 'durable-chat:turns-left-midway';
let restored = false;

export function noteLeftTurn(identity: string, leftAt: number | undefined): void {
  turnsLeftMidway.set(identity, leftAt);
}

export function forgetLeftTurn(identity: string): void {
  turnsLeftMidway.delete(identity);
}

/**
 * True (once) when the chat's live turn, just loaded, is the one this page (or the page a reload
 * replaced) left midway: this page made it, so it is not another tab's turn to follow. Asked by
 * `useDurableChat`'s resume on mount and by `useChat`'s own resume (the handle's gate).
 */
export function takeBackLeftTurn(
  handle: { readonly identity: string; getState(): ChatSessionState },
  warn: (message: string) => void,
): boolean {
  restoreAfterReload(warn);
  const { identity } = handle;
  if (!turnsLeftMidway.has(identity)) return false;
  const leftAt = turnsLeftMidway.get(identity);
  turnsLeftMidway.delete(identity);
  const { turnLive, closed, turnStartCursor } = handle.getState();
  if (!turnLive || closed) return false;
  // A turn another tab started after this page left begins past the cursor it had read.
  return turnStartCursor === undefined || (leftAt !== undefined && turnStartCursor <= leftAt);
}

/** The page unloads (`pagehide`): what it left midway goes to the page a reload brings. */
export function keepLeftTurnsForReload(warn: (message: string) => void): void {
  if (turnsLeftMidway.size === 0) return;
  tabStorage(warn, (storage) => storage.setItem(RELOAD_KEY, JSON.stringify([...turnsLeftMidway])));
}

function restoreAfterReload(warn: (message: string) => void): void {
  if (restored) return;
  restored = true;
  tabStorage(warn, (storage) => {
    const kept = storage.getItem(RELOAD_KEY);
    if (kept === null) return;
    storage.removeItem(RELOAD_KEY);
    // Only a reload is the same page: a duplicated tab copies `sessionStorage` too.
    const [navigation] = performance.getEntriesByType('navigation') as PerformanceNavigationTiming[];
    if (navigation?.type !== 'reload') return;
    for (const [identity, leftAt] of JSON.parse(kept) as [string, number | null][])
      if (!turnsLeftMidway.has(identity)) turnsLeftMidway.set(identity, leftAt ?? undefined);
  });
}

function tabStorage(warn: (message: string) => void, use: (storage: Storage) => void): void {
  try {
    if (typeof sessionStorage !== 'undefined') use(sessionStorage);
  } catch (error) {
    // Blocked storage (a sandboxed frame), or a kept entry that is not ours: nothing carries over.
    warn(`could not keep the turns left midway across a reload: ${String(error)}`);
  }
}
