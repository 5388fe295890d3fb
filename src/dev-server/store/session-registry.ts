import { SESSION_ID_PREFIX } from '../../protocol/limits.js';
import type { AnyAgent } from '../agents/define-agent.js';
import type { Session } from './session.js';
import { MemorySessionStorage, type SessionStorage } from './session-storage.js';

/** Sessions by friendly id and by (`taskIdentifier`, `externalId`). */
export class SessionRegistry {
  private readonly byId = new Map<string, Session>();
  private readonly byExternal = new Map<string, Session>();
  /** `externalId` alone, as the `.out` / `.in` path form carries it (the latest session wins). */
  private readonly byExternalOnly = new Map<string, Session>();

  constructor(private readonly storage: SessionStorage = new MemorySessionStorage()) {}

  private static key(taskIdentifier: string, externalId: string): string {
    return `${taskIdentifier}\u0000${externalId}`;
  }

  /** A new session: registered, and kept by the storage from now on. */
  add(session: Session): void {
    this.index(session);
    this.storage.keep(session);
  }

  /** Registers the sessions an earlier process left (the storage keeps them already). */
  recover(agentFor: (taskIdentifier: string) => AnyAgent | undefined): number {
    const sessions = this.storage.recover(agentFor);
    for (const session of sessions) this.index(session);
    return sessions.length;
  }

  private index(session: Session): void {
    this.byId.set(session.row.id, session);
    const { externalId, taskIdentifier } = session.row;
    if (externalId !== null) {
      this.byExternal.set(SessionRegistry.key(taskIdentifier, externalId), session);
      this.byExternalOnly.set(externalId, session);
    }
  }

  findByExternal(taskIdentifier: string, externalId: string): Session | undefined {
    return this.byExternal.get(SessionRegistry.key(taskIdentifier, externalId));
  }

  /** Resolves a path segment: a `session_…` id or an `externalId`. */
  resolve(idOrExternalId: string): Session | undefined {
    if (idOrExternalId.startsWith(SESSION_ID_PREFIX)) return this.byId.get(idOrExternalId);
    return this.byExternalOnly.get(idOrExternalId);
  }

  get size(): number {
    return this.byId.size;
  }

  all(): IterableIterator<Session> {
    return this.byId.values();
  }

  /**
   * Stops keeping anything first (a closing server's runs end like a crash's, and the data
   * folder records them that way), then forgets every session; settles once what was kept
   * is durable and the folder is released.
   */
  close(): Promise<void> {
    const closing = this.storage.close();
    this.clear();
    return closing;
  }

  clear(): void {
    for (const session of this.byId.values()) session.dispose();
    this.byId.clear();
    this.byExternal.clear();
    this.byExternalOnly.clear();
  }
}
