import {
  type PersistedChatRecord,
  parsePersistedRecord,
  type SessionPersistence,
  tombstoneExpired,
  toPersistedRecord,
} from './persistence.js';
import type { ChatSessionState, SessionStore } from './session-store.js';

function persistedFieldsChanged(next: ChatSessionState, previous: ChatSessionState): boolean {
  return (
    next.sessionId !== previous.sessionId ||
    next.token !== previous.token ||
    next.lastEventId !== previous.lastEventId ||
    next.turns !== previous.turns ||
    next.turnMessage !== previous.turnMessage ||
    next.queuedTurns !== previous.queuedTurns ||
    next.closed !== previous.closed
  );
}

/**
 * Keeps one chat's record in a persistence adapter. Saves are coalesced: changes made in
 * the same tick, or while a save is in flight, produce one more save with the latest state,
 * so a fast stream costs a handful of writes, not one per batch. The token is kept only in
 * a scoped adapter's records; a closed session leaves a dated tombstone, removed on load once
 * it has expired.
 */
export class PersistenceBinding {
  #unsubscribe: (() => void) | undefined;
  #scheduled = false;
  #saving = false;
  #dirty = false;
  #disposed = false;
  /** When this chat's close was first known (loaded from its tombstone, or seen here). */
  #closedAt: number | undefined;
  /** Holds in force (see `hold`): while any is, nothing is written. */
  #holds = 0;
  /** The next save goes through the holds (see `saveThroughHolds`). */
  #forced = false;

  readonly #chatId: string;
  readonly #store: SessionStore;
  readonly #adapter: SessionPersistence;
  readonly #warn: (message: string) => void;
  readonly #now: () => number;

  constructor(
    chatId: string,
    store: SessionStore,
    adapter: SessionPersistence,
    warn: (message: string) => void,
    now: () => number = Date.now,
  ) {
    this.#chatId = chatId;
    this.#store = store;
    this.#adapter = adapter;
    this.#warn = warn;
    this.#now = now;
  }

  /** The stored record, or undefined when there is none or it is unusable (then it is removed). */
  async load(): Promise<PersistedChatRecord | undefined> {
    let raw: unknown;
    try {
      raw = await this.#adapter.load(this.#chatId);
    } catch (error) {
      this.#say('could not load the', error);
      return undefined;
    }
    if (raw === undefined || raw === null) return undefined;
    const parsed = parsePersistedRecord(raw, this.#chatId);
    if (typeof parsed === 'string') {
      this.#say('discarding the corrupt', parsed);
      await this.#remove('corrupt');
      return undefined;
    }
    if (tombstoneExpired(parsed, this.#now())) {
      await this.#remove('expired');
      return undefined;
    }
    if (parsed.closed) this.#closedAt = parsed.closedAt ?? this.#now();
    return parsed;
  }

  /** `<doing> record of chat <id>: <why>`, the binding's one warning shape. */
  #say(doing: string, why: unknown): void {
    this.#warn(`${doing} record of chat ${this.#chatId}: ${String(why)}`);
  }

  async #remove(what: 'corrupt' | 'expired'): Promise<void> {
    try {
      await this.#adapter.remove(this.#chatId);
    } catch (error) {
      this.#say(`could not remove the ${what}`, error);
    }
  }

  /**
   * Loads the record into the store (the token through `adoptToken`, which reads its
   * claims), then starts saving changes. A token in an unscoped adapter's record, or in a
   * closed one (both written by earlier versions), is never used, and is rewritten away.
   */
  async restore(adoptToken: (token: string) => void): Promise<void> {
    const record = await this.load();
    if (record !== undefined) {
      this.#store.setState({
        sessionId: record.sessionId,
        lastEventId: record.lastEventId,
        turns: record.turns,
        turnMessage: record.turnMessage,
        closed: record.closed,
        closedReason: record.closedReason,
        status: record.closed ? { type: 'closed' } : { type: 'idle' },
      });
      const scoped = this.#adapter.scope !== undefined;
      if (record.publicAccessToken !== undefined && scoped && !record.closed)
        adoptToken(record.publicAccessToken);
      // Written before tombstones were dated, or tokens kept only under a scope: rewritten now.
      const legacy = record.closed
        ? record.closedAt === undefined
        : record.publicAccessToken !== undefined && !scoped;
      if (legacy) this.#schedule();
    }
    this.start();
  }

  start(): void {
    if (this.#disposed || this.#unsubscribe !== undefined) return;
    this.#unsubscribe = this.#store.subscribe((next, previous) => {
      if (persistedFieldsChanged(next, previous)) this.#schedule();
    });
  }

  /** Resolves when every scheduled save has been written (tests and page-hide handlers use it). */
  async flush(): Promise<void> {
    while (this.#scheduled || this.#saving) await new Promise((resolve) => setTimeout(resolve, 0));
  }

  /**
   * Writes nothing until the returned function is called. For a tab that follows another
   * tab's turn: its view of the turn trails the owner's, so each write would put the shared
   * record back behind what the owner wrote (a turn that ended would read as live again, and
   * a tab loading it would replay that turn as its own). Changes made meanwhile are not
   * written on release; the next change writes the whole state.
   */
  hold(): () => void {
    this.#holds += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#holds -= 1;
    };
  }

  /**
   * Writes the state once, held or not: what only this page knows as it leaves (a send it
   * noted, see `SessionChatTransport.noteIfLeaving`) is lost if it waits for the holds to end.
   */
  saveThroughHolds(): void {
    this.#forced = true;
    this.#schedule();
  }

  dispose(): void {
    this.#disposed = true;
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
  }

  #schedule(): void {
    if (this.#holds > 0 && !this.#forced) return;
    if (this.#saving) {
      this.#dirty = true;
      return;
    }
    if (this.#scheduled) return;
    this.#scheduled = true;
    queueMicrotask(() => {
      this.#scheduled = false;
      void this.#save();
    });
  }

  async #save(): Promise<void> {
    this.#saving = true;
    try {
      do {
        this.#dirty = false;
        if (this.#holds > 0 && !this.#forced) break;
        this.#forced = false;
        const state = this.#store.getState();
        if (state.closed) this.#closedAt ??= this.#now();
        const keepToken = this.#adapter.scope !== undefined;
        await this.#adapter.save(
          this.#chatId,
          toPersistedRecord(state, { keepToken, closedAt: this.#closedAt }),
        );
      } while (this.#dirty);
    } catch (error) {
      this.#say('could not save the', error);
    } finally {
      this.#saving = false;
    }
  }
}
