/**
 * Everything the client takes from its host, injectable so tests swap it without
 * monkey-patching. Globals are read late (per call), so a polyfill installed after the
 * client was created is still used.
 */
export interface ClientEnvironment {
  fetch: typeof globalThis.fetch;
  now: () => number;
  random: () => number;
  setTimeout: (callback: () => void, ms: number) => unknown;
  clearTimeout: (handle: unknown) => void;
  /**
   * Calls `listener` when the host regains connectivity or the page becomes usable again:
   * `online`, `visibilitychange` to visible, and a `pageshow` restored from the bfcache.
   * Returns an unsubscribe function.
   */
  onWake: (listener: () => void) => () => void;
  /**
   * Calls `listener` when the page goes away for good (`pagehide`, not kept in the back-forward
   * cache): what only this page knows must be written down now. Returns an unsubscribe function.
   */
  onUnload: (listener: () => void) => () => void;
  /** Where recoverable problems (a corrupt persisted record) are reported. */
  warn: (message: string) => void;
}

function browserWake(listener: () => void): () => void {
  const win = (globalThis as { window?: EventTarget }).window;
  const doc = (globalThis as { document?: EventTarget & { visibilityState?: string } }).document;
  const onVisibility = () => {
    if (doc?.visibilityState === 'visible') listener();
  };
  const onPageShow = (event: Event) => {
    if ((event as Event & { persisted?: boolean }).persisted === true) listener();
  };
  win?.addEventListener?.('online', listener);
  win?.addEventListener?.('pageshow', onPageShow);
  doc?.addEventListener?.('visibilitychange', onVisibility);
  return () => {
    win?.removeEventListener?.('online', listener);
    win?.removeEventListener?.('pageshow', onPageShow);
    doc?.removeEventListener?.('visibilitychange', onVisibility);
  };
}

function browserUnload(listener: () => void): () => void {
  const win = (globalThis as { window?: EventTarget }).window;
  const onPageHide = (event: Event) => {
    if ((event as Event & { persisted?: boolean }).persisted !== true) listener();
  };
  win?.addEventListener?.('pagehide', onPageHide);
  return () => win?.removeEventListener?.('pagehide', onPageHide);
}

/**
 * The host's environment with nothing overridden, built once: its functions read the globals
 * per call, so every client can share it instead of holding eight closures of its own.
 */
let hostEnvironment: ClientEnvironment | undefined;

/** The host's environment, with any field overridden. */
export function resolveEnvironment(overrides: Partial<ClientEnvironment> = {}): ClientEnvironment {
  let overridden = false;
  for (const key in overrides) {
    if (overrides[key as keyof ClientEnvironment] !== undefined) overridden = true;
  }
  if (!overridden) {
    hostEnvironment ??= buildEnvironment({});
    return hostEnvironment;
  }
  return buildEnvironment(overrides);
}

function buildEnvironment(overrides: Partial<ClientEnvironment>): ClientEnvironment {
  return {
    fetch: overrides.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    now: overrides.now ?? (() => Date.now()),
    random: overrides.random ?? (() => Math.random()),
    setTimeout: overrides.setTimeout ?? ((callback, ms) => globalThis.setTimeout(callback, ms)),
    clearTimeout:
      overrides.clearTimeout ??
      ((handle) => globalThis.clearTimeout(handle as ReturnType<typeof globalThis.setTimeout>)),
    onWake: overrides.onWake ?? browserWake,
    onUnload: overrides.onUnload ?? browserUnload,
    warn: overrides.warn ?? ((message) => console.warn(`[durable-chat] ${message}`)),
  };
}

/** A manual wake source for non-browser hosts and tests: call `wake()` to fire listeners. */
export function createWakeSource(): { onWake: ClientEnvironment['onWake']; wake: () => void } {
  const listeners = new Set<() => void>();
  return {
    onWake(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    wake() {
      for (const listener of [...listeners]) listener();
    },
  };
}

/** An opaque id for `X-Part-Id`: 32 hex characters, no secure-context requirement. */
export function randomPartId(): string {
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  let id = '';
  for (const byte of bytes) id += byte.toString(16).padStart(2, '0');
  return id;
}

/**
 * Waits `ms`, ending early (resolving) on a wake event and rejecting when `signal` aborts.
 * Returns true when woken early.
 */
export function sleep(env: ClientEnvironment, ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise<boolean>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    let unsubscribe = () => {};
    const finish = (woken: boolean) => {
      env.clearTimeout(handle);
      unsubscribe();
      signal?.removeEventListener('abort', onAbort);
      resolve(woken);
    };
    const onAbort = () => {
      env.clearTimeout(handle);
      unsubscribe();
      reject(signal?.reason);
    };
    const handle = env.setTimeout(() => finish(false), ms);
    unsubscribe = env.onWake(() => finish(true));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Calls `onAbort` once `signal` aborts, at once when it already has. */
export function listenForAbort(signal: AbortSignal | undefined, onAbort: () => void): void {
  if (signal?.aborted) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });
}
