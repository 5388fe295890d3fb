import { close, fdatasync, fsync, open, rename, write } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import type { OutRecord } from '../../protocol/types.js';
import type { DevServerLogger } from '../logger.js';
import type { InRecord } from './in-log.js';
import { encodeBatch, type JournalBatch } from './journal-format.js';
import type { Session, SessionJournal } from './session.js';
import { captureBase, captureState } from './session-state.js';

const openFile = promisify(open);
const writeFile = promisify(write);
const syncData = promisify(fdatasync);
const syncFile = promisify(fsync);
const closeFile = promisify(close);
const renameFile = promisify(rename);

/** A journal this long is rewritten as one base line (and at least 4× the last base). */
export const COMPACT_AFTER_BYTES = 1024 * 1024;

/** Errors of file systems and platforms that cannot sync a directory (Windows cannot open one). */
const DIRECTORY_SYNC_UNSUPPORTED = new Set(['EISDIR', 'EPERM', 'EINVAL', 'ENOTSUP', 'EACCES']);

/**
 * Makes a new directory entry durable (a new file, a rename) by syncing its directory.
 * Where that is impossible (Windows, some network file systems) it is skipped: the entry is
 * then as durable as that file system makes it, which a killed process never affects.
 */
export async function syncDirectory(path: string): Promise<void> {
  if (process.platform === 'win32') return;
  let fd: number;
  try {
    fd = await openFile(path, 'r');
  } catch (error) {
    if (DIRECTORY_SYNC_UNSUPPORTED.has((error as NodeJS.ErrnoException).code ?? '')) return;
    throw error;
  }
  try {
    await syncFile(fd);
  } catch (error) {
    if (!DIRECTORY_SYNC_UNSUPPORTED.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
  } finally {
    await closeFile(fd);
  }
}

async function writeAll(fd: number, bytes: Buffer): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) {
    offset += (await writeFile(fd, bytes, offset, bytes.length - offset)).bytesWritten;
  }
}

interface Waiter {
  generation: number;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * A session's append-only journal: `{dir}/sessions/{id}/journal.log`, one JSON line per
 * write. Everything recorded while a write is on its way goes out in the next one (group
 * commit): one `write` + `fdatasync` per batch, never per record, so a fast agent costs a
 * sync per burst, not per chunk. Only after the sync are `.out` records published to readers
 * and `durable()` settled (an append is acknowledged after it), so nothing acknowledged can
 * be lost and nothing unacknowledged was seen. Grown past `COMPACT_AFTER_BYTES` it is
 * rewritten (temporary file, sync, rename, directory sync) as one base line.
 *
 * | phase \ event | record         | batch written          | write fails           | `close()`                       |
 * |---------------|----------------|------------------------|-----------------------|---------------------------------|
 * | open          | open (queued)  | open, readers woken    | failed, waiters reject | closing                         |
 * | closing       | – (ignored)    | closing; none left: closed | failed            | –                               |
 * | closed        | – (ignored)    | –                      | –                     | –                               |
 * | failed        | – (ignored)    | –                      | –                     | – (`durable()` keeps rejecting) |
 *
 * `closing` ignores records because a closing server's runs end next (a shutdown): the
 * folder keeps them as a kill would have, cut mid-turn.
 */
export class FileSessionJournal implements SessionJournal {
  private fd: number | undefined;
  private phase: 'open' | 'closing' | 'closed' | 'failed' = 'open';
  private failure: unknown;
  private pendingIn: InRecord[] = [];
  private pendingOut: OutRecord[] = [];
  private pendingTrim: number | undefined;
  private pendingSpent: number[] = [];
  private stateChanged = false;
  /** Bumped by every record; `durableGeneration` is the last one on disk. */
  private generation = 0;
  private durableGeneration = 0;
  private waiters: Waiter[] = [];
  private loop: Promise<void> | undefined;
  private fileBytes: number;
  private baseBytes = 0;
  /** The file does not exist yet: its folder is made, and synced once it is. */
  private isNew: boolean;

  constructor(
    private readonly session: Session,
    private readonly path: string,
    private readonly logger: DevServerLogger,
    options: { existingBytes: number; isNew: boolean },
  ) {
    this.fileBytes = options.existingBytes;
    this.isNew = options.isNew;
  }

  in(record: InRecord): void {
    if (this.take()) this.pendingIn.push(record);
  }

  out(records: readonly OutRecord[]): void {
    if (this.take()) for (const record of records) this.pendingOut.push(record);
  }

  trim(beforeSeq: number): void {
    if (this.take()) this.pendingTrim = beforeSeq;
  }

  spent(seq: number): void {
    if (this.take()) this.pendingSpent.push(seq);
  }

  changed(): void {
    if (this.take()) this.stateChanged = true;
  }

  durable(): Promise<void> | undefined {
    if (this.phase === 'failed') return Promise.reject(this.failure);
    if (this.durableGeneration >= this.generation) return undefined;
    return new Promise((resolve, reject) =>
      this.waiters.push({ generation: this.generation, resolve, reject }),
    );
  }

  /** Takes nothing more, writes what was taken, and closes the file. */
  async close(): Promise<void> {
    if (this.phase !== 'open') return;
    this.phase = 'closing';
    await this.loop;
    if (this.generation > this.durableGeneration) await this.drain();
    if (this.phase === 'closing') this.phase = 'closed';
  }

  private take(): boolean {
    if (this.phase !== 'open') return false;
    this.generation += 1;
    if (this.loop === undefined) {
      // One event-loop turn of records (a turn-complete, its trim and the new state) per batch.
      this.loop = new Promise((resolve) => setImmediate(resolve)).then(() => this.drain());
    }
    return true;
  }

  private async drain(): Promise<void> {
    try {
      while (this.generation > this.durableGeneration) {
        const generation = this.generation;
        const outEnd = this.session.out.nextSeq;
        await this.writeBatch();
        this.durableGeneration = generation;
        this.session.out.publish(outEnd);
        this.settle();
        // Records taken while it closes keep the loop going (the file is opened again).
        if (this.generation === this.durableGeneration) await this.closeFile();
      }
    } catch (error) {
      this.phase = 'failed';
      this.failure = error;
      this.logger.warn(
        `session ${this.session.row.id}: its journal could not be written (${this.path})`,
        error,
      );
      for (const waiter of this.waiters) waiter.reject(error);
      this.waiters = [];
      await this.closeFile();
    } finally {
      this.loop = undefined;
    }
  }

  /**
   * Held only while a burst of writes lasts: a server with thousands of sessions must not
   * keep a descriptor per session (an open costs little next to the sync).
   */
  private async closeFile(): Promise<void> {
    const fd = this.fd;
    this.fd = undefined;
    if (fd === undefined) return;
    try {
      await closeFile(fd);
    } catch (error) {
      this.logger.warn(`${this.path}: closing the journal failed`, error);
    }
  }

  private settle(): void {
    const still: Waiter[] = [];
    for (const waiter of this.waiters) {
      if (waiter.generation <= this.durableGeneration) waiter.resolve();
      else still.push(waiter);
    }
    this.waiters = still;
  }

  private takeBatch(): JournalBatch {
    const batch: JournalBatch = {};
    if (this.pendingIn.length > 0) batch.in = this.pendingIn;
    if (this.pendingOut.length > 0) batch.out = this.pendingOut;
    if (this.pendingTrim !== undefined) batch.trim = this.pendingTrim;
    if (this.pendingSpent.length > 0) batch.spent = this.pendingSpent;
    if (this.stateChanged) batch.state = captureState(this.session);
    this.pendingIn = [];
    this.pendingOut = [];
    this.pendingTrim = undefined;
    this.pendingSpent = [];
    this.stateChanged = false;
    return batch;
  }

  private async writeBatch(): Promise<void> {
    if (this.fileBytes >= Math.max(COMPACT_AFTER_BYTES, 4 * this.baseBytes)) {
      this.takeBatch(); // The base holds all of it.
      return this.compact();
    }
    const bytes = Buffer.from(encodeBatch(this.takeBatch()));
    const fd = await this.file();
    await writeAll(fd, bytes);
    await syncData(fd);
    this.fileBytes += bytes.length;
  }

  private async file(): Promise<number> {
    if (this.fd !== undefined) return this.fd;
    const directory = dirname(this.path);
    if (this.isNew) await mkdir(directory, { recursive: true });
    this.fd = await openFile(this.path, 'a');
    if (this.isNew) {
      // The new file and its folder must survive a power cut too, not only a killed process.
      this.isNew = false;
      await syncDirectory(directory);
      await syncDirectory(dirname(directory));
    }
    return this.fd;
  }

  private async compact(): Promise<void> {
    const bytes = Buffer.from(encodeBatch(captureBase(this.session)));
    const temporary = `${this.path}.compact`;
    const fd = await openFile(temporary, 'w');
    try {
      await writeAll(fd, bytes);
      await syncData(fd);
    } finally {
      await closeFile(fd);
    }
    await this.closeFile();
    await renameFile(temporary, this.path);
    await syncDirectory(dirname(this.path));
    this.fileBytes = bytes.length;
    this.baseBytes = bytes.length;
  }
}
