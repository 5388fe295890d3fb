import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DataFolderError } from '../../errors/data-folder-error.js';

/** The file that says which process serves a data folder. */
export const LOCK_FILE = 'server.lock';

/** Locks this process holds: a lock naming this pid but none of these is an earlier process's. */
const held = new Set<string>();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readLock(path: string): { pid: number; nonce: string } | undefined {
  try {
    const [pid, nonce] = readFileSync(path, 'utf8').trim().split(' ');
    return { pid: Number(pid), nonce: nonce ?? '' };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Takes the data folder for this server: two servers appending to the same journals would
 * interleave their lines. A lock left by a process that died (a kill, a crash) is taken
 * over; one held by a live process fails with `DATA_FOLDER_IN_USE`. Returns the release.
 */
export function lockDataFolder(dir: string): () => void {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, LOCK_FILE);
  const nonce = randomBytes(8).toString('hex');
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(path, `${process.pid} ${nonce}\n`, { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw error;
    }
    const owner = readLock(path);
    const ours = owner?.pid === process.pid && held.has(owner.nonce);
    // The same pid without one of our nonces: an earlier process (a container's pid 1, say).
    const live = owner !== undefined && owner.pid !== process.pid && alive(owner.pid);
    if (ours || live) {
      throw new DataFolderError({
        code: 'DATA_FOLDER_IN_USE',
        path: dir,
        message: `${dir} is in use by another dev server (pid ${owner?.pid}); stop it or pass another --data-dir`,
      });
    }
    unlinkSync(path);
  }
  held.add(nonce);
  return () => {
    held.delete(nonce);
    if (readLock(path)?.nonce === nonce) unlinkSync(path);
  };
}
