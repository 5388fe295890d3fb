import { SESSION_ID_PREFIX } from '../../protocol/limits.js';
import type { Session } from './session.js';

/** Sessions by friendly id and by (`taskIdentifier`, `externalId`). */
export class SessionRegistry {
  private readonly byId = new Map<string, Session>();
  private readonly byExternal = new Map<string, Session>();
  /** `externalId` alone, as the `.out` / `.in` path form carries it (the latest session wins). */
  private readonly byExternalOnly = new Map<string, Session>();

  private static key(taskIdentifier: string, externalId: string): string {
    return `${taskIdentifier}\u0000${externalId}`;
  }

  add(session: Session): void {
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

  clear(): void {
    for (const session of this.byId.values()) session.dispose();
    this.byId.clear();
    this.byExternal.clear();
    this.byExternalOnly.clear();
  }
}
