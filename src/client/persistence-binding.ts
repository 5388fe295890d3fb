import {
  type PersistedChatRecord,
  parsePersistedRecord,
  type SessionPersistence,
  toPersistedRecord,
} from './persistence.js';
import type { ChatSessionState, SessionStore } from './session-store.js';

function persistedFieldsChanged(next: ChatSessionState, previous: ChatSessionState): boolean {
  return (
    next.sessionId !== previous.sessionId ||
    next.token !== previous.token ||
    next.lastEventId !== previous.lastEventId ||
    next.turnLive !== previous.turnLive ||
    next.turnStored !== previous.turnStored ||
    next.stoppedTurn !== previous.stoppedTurn ||
    next.pendingAppend !== previous.pendingAppend ||
    next.turnStartCursor !== previous.turnStartCursor ||
    next.turnMessage !== previous.turnMessage ||
    next.closed !== previous.closed
  );
}

/**
 * Keeps one chat's record in a persistence adapter. Saves are coalesced: changes made in
 * the same tick, or while a save is in flight, produce one more save with the latest state,
 * so a fast stream costs a handful of writes, not one per batch.
 */
export class PersistenceBinding {
  private unsubscribe: (() => void) | undefined;
  private scheduled = false;
  private saving = false;
  private dirty = false;
  private disposed = false;

  constructor(
    private readonly chatId: string,
    private readonly store: SessionStore,
    private readonly adapter: SessionPersistence,
    private readonly warn: (message: string) => void,
  ) {}

  /** The stored record, or undefined when there is none or it is unusable (then it is removed). */
  async load(): Promise<PersistedChatRecord | undefined> {
    let raw: unknown;
    try {
      raw = await this.adapter.load(this.chatId);
    } catch (error) {
      this.warn(`could not load the persisted record of chat ${this.chatId}: ${String(error)}`);
      return undefined;
    }
    if (raw === undefined || raw === null) return undefined;
    const parsed = parsePersistedRecord(raw, this.chatId);
    if (typeof parsed !== 'string') return parsed;
    this.warn(`discarding the corrupt persisted record of chat ${this.chatId} (${parsed})`);
    try {
      await this.adapter.remove(this.chatId);
    } catch (error) {
      this.warn(`could not remove the corrupt record of chat ${this.chatId}: ${String(error)}`);
    }
    return undefined;
  }

  /**
   * Loads the record into the store (the token through `adoptToken`, which reads its
   * claims), then starts saving changes.
   */
  async restore(adoptToken: (token: string) => void): Promise<void> {
    const record = await this.load();
    if (record !== undefined) {
      this.store.setState({
        sessionId: record.sessionId,
        lastEventId: record.lastEventId,
        turnLive: record.turnLive,
        turnStored: record.turnStored === true,
        stoppedTurn: record.stoppedTurn,
        pendingAppend: record.pendingAppend,
        turnStartCursor: record.turnStartCursor,
        turnMessage: record.turnMessage,
        closed: record.closed,
        closedReason: record.closedReason,
        status: record.closed ? { type: 'closed' } : { type: 'idle' },
      });
      if (record.publicAccessToken !== undefined) adoptToken(record.publicAccessToken);
    }
    this.start();
  }

  start(): void {
    if (this.disposed || this.unsubscribe !== undefined) return;
    this.unsubscribe = this.store.subscribe((next, previous) => {
      if (persistedFieldsChanged(next, previous)) this.schedule();
    });
  }

  /** Resolves when every scheduled save has been written (tests and page-hide handlers use it). */
  async flush(): Promise<void> {
    while (this.scheduled || this.saving) await new Promise((resolve) => setTimeout(resolve, 0));
  }

  dispose(): void {
    this.disposed = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  private schedule(): void {
    if (this.saving) {
      this.dirty = true;
      return;
    }
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      void this.save();
    });
  }

  private async save(): Promise<void> {
    this.saving = true;
    try {
      do {
        this.dirty = false;
        await this.adapter.save(this.chatId, toPersistedRecord(this.store.getState()));
      } while (this.dirty);
    } catch (error) {
      this.warn(`could not save the record of chat ${this.chatId}: ${String(error)}`);
    } finally {
      this.saving = false;
    }
  }
}
