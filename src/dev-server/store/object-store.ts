import { mkdir, open, readFile, rename } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { SessionSnapshot } from '../../protocol/types.js';
import { syncDirectory } from './file-session-journal.js';

/** Per-session snapshot storage: the durable history a new run boots from. */
export interface ObjectStore {
  readSnapshot(sessionId: string): Promise<SessionSnapshot | undefined>;
  writeSnapshot(sessionId: string, snapshot: SessionSnapshot): Promise<void>;
  /**
   * The server is closing: write nothing more, and settle once the writes under way are done.
   * Optional; the dev server calls it before it releases the data folder.
   */
  close?(): Promise<void>;
}

/** Snapshots as JSON strings, so a stored snapshot can never alias a live message array. */
export class MemoryObjectStore implements ObjectStore {
  private readonly objects = new Map<string, string>();

  async readSnapshot(sessionId: string): Promise<SessionSnapshot | undefined> {
    const text = this.objects.get(sessionId);
    return text === undefined ? undefined : (JSON.parse(text) as SessionSnapshot);
  }

  async writeSnapshot(sessionId: string, snapshot: SessionSnapshot): Promise<void> {
    this.objects.set(sessionId, JSON.stringify(snapshot));
  }

  /** Number of stored snapshots (tests and the memory benchmark read it). */
  get size(): number {
    return this.objects.size;
  }
}

let writeCounter = 0;

/** One file per session at `{dir}/sessions/{sessionId}/snapshot.json`, written atomically. */
export class DirectoryObjectStore implements ObjectStore {
  private closed = false;
  private readonly writing = new Set<Promise<void>>();

  constructor(readonly dir: string) {}

  /**
   * A closing server keeps nothing more, as a crash would: a run that ends after the close
   * writes no snapshot into a folder the next server may already own.
   */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.writing]);
  }

  private path(sessionId: string): string {
    return join(this.dir, 'sessions', sessionId, 'snapshot.json');
  }

  async readSnapshot(sessionId: string): Promise<SessionSnapshot | undefined> {
    try {
      return JSON.parse(await readFile(this.path(sessionId), 'utf8')) as SessionSnapshot;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async writeSnapshot(sessionId: string, snapshot: SessionSnapshot): Promise<void> {
    if (this.closed) return;
    const write = this.write(sessionId, snapshot);
    this.writing.add(write);
    try {
      await write;
    } finally {
      this.writing.delete(write);
    }
  }

  private async write(sessionId: string, snapshot: SessionSnapshot): Promise<void> {
    // Serialised before the first await: the caller's message array keeps changing.
    const text = JSON.stringify(snapshot);
    const path = this.path(sessionId);
    await mkdir(join(this.dir, 'sessions', sessionId), { recursive: true });
    writeCounter += 1;
    const temporary = `${path}.${process.pid}.${writeCounter}.tmp`;
    // Synced before the rename and the folder after it: `.out` is trimmed on the promise
    // that this snapshot holds the history, so it must outlive a power cut too.
    const handle = await open(temporary, 'w');
    try {
      await handle.writeFile(text);
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(temporary, path);
    await syncDirectory(dirname(path));
  }
}

export function createObjectStore(option: 'memory' | { dir: string } | ObjectStore): ObjectStore {
  if (option === 'memory') return new MemoryObjectStore();
  if ('dir' in option && typeof option.dir === 'string') return new DirectoryObjectStore(option.dir);
  return option as ObjectStore;
}
