import { existsSync, readdirSync, readFileSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import type { AnyAgent } from '../agents/define-agent.js';
import type { DevServerLogger } from '../logger.js';
import { lockDataFolder } from './data-folder-lock.js';
import { FileSessionJournal } from './file-session-journal.js';
import { parseJournal } from './journal-format.js';
import type { Session } from './session.js';
import { rebuildSession, replayBatches } from './session-state.js';

/** Where sessions (row, run state, `.in`, `.out`) live between restarts. */
export interface SessionStorage {
  /** The sessions an earlier process left, oldest first, none with a live run. */
  recover(agentFor: (taskIdentifier: string) => AnyAgent | undefined): Session[];
  /** Keeps a new session from now on. */
  keep(session: Session): void;
  /**
   * Takes no more records (what a closing server's runs do next is lost, as in a crash),
   * waits until what was taken is durable, and releases the folder.
   */
  close(): Promise<void>;
}

/** Nothing survives the process: the in-process default, for tests. */
export class MemorySessionStorage implements SessionStorage {
  recover(): Session[] {
    return [];
  }

  keep(): void {}

  async close(): Promise<void> {}
}

export const JOURNAL_FILE = 'journal.log';

/**
 * `{dir}/sessions/{sessionId}/journal.log` per session (see `FileSessionJournal`), next to
 * the session's `snapshot.json`; the folder is locked while the server runs.
 */
export class DirectorySessionStorage implements SessionStorage {
  private readonly journals = new Set<FileSessionJournal>();
  private readonly release: () => void;
  private closing: Promise<void> | undefined;

  constructor(
    readonly dir: string,
    private readonly logger: DevServerLogger,
  ) {
    this.release = lockDataFolder(dir);
  }

  private sessionsDir(): string {
    return join(this.dir, 'sessions');
  }

  recover(agentFor: (taskIdentifier: string) => AnyAgent | undefined): Session[] {
    const root = this.sessionsDir();
    if (!existsSync(root)) return [];
    const sessions: Session[] = [];
    try {
      for (const entry of readdirSync(root, { withFileTypes: true })) {
        if (!entry.isDirectory()) continue;
        const path = join(root, entry.name, JOURNAL_FILE);
        if (!existsSync(path)) continue;
        const session = this.recoverOne(path, agentFor);
        if (session !== undefined) sessions.push(session);
      }
    } catch (error) {
      // The server will not start: the folder must not stay locked for the next attempt.
      this.release();
      throw error;
    }
    return sessions.sort((a, b) => a.row.createdAt.localeCompare(b.row.createdAt));
  }

  private recoverOne(
    path: string,
    agentFor: (taskIdentifier: string) => AnyAgent | undefined,
  ): Session | undefined {
    const parsed = parseJournal(readFileSync(path), path);
    if (parsed.tornBytes > 0) {
      // The write a kill cut short was never acknowledged: dropped, so appends follow whole lines.
      truncateSync(path, parsed.validBytes);
      this.logger.warn(`${path}: dropped ${parsed.tornBytes} bytes of an unfinished last write`);
    }
    const replayed = replayBatches(parsed.batches, path);
    // A session whose creation never reached the disk was never answered either.
    if (replayed.state === undefined) return undefined;
    const agent = agentFor(replayed.state.row.taskIdentifier);
    if (agent === undefined) {
      this.logger.warn(
        `session ${replayed.state.row.id}: no agent serves "${replayed.state.row.taskIdentifier}" now; it stays in ${path} until one does`,
      );
      return undefined;
    }
    const session = rebuildSession(replayed, replayed.state, agent);
    this.attach(session, path, { existingBytes: parsed.validBytes, isNew: false });
    return session;
  }

  keep(session: Session): void {
    const path = join(this.sessionsDir(), session.row.id, JOURNAL_FILE);
    this.attach(session, path, { existingBytes: 0, isNew: true });
    session.changed();
  }

  private attach(session: Session, path: string, options: { existingBytes: number; isNew: boolean }): void {
    if (this.closing !== undefined) return;
    const journal = new FileSessionJournal(session, path, this.logger, options);
    this.journals.add(journal);
    session.keepIn(journal);
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      try {
        await Promise.all([...this.journals].map((journal) => journal.close()));
      } finally {
        this.release();
      }
    })();
    return this.closing;
  }
}

export function createSessionStorage(dataDir: string | undefined, logger: DevServerLogger): SessionStorage {
  return dataDir === undefined ? new MemorySessionStorage() : new DirectorySessionStorage(dataDir, logger);
}
