import type { LockManagerLike } from '../../../src/session/tab-channel.js';

interface Waiter {
  grant: () => void;
  signal: AbortSignal | undefined;
}

/**
 * The exclusive-mode subset of the Web Locks API (happy-dom has none), shared by the
 * "tabs" of a test: a lock is held until the callback's promise settles; `ifAvailable`
 * gets `null` instead of waiting; a waiting request rejects when its signal aborts.
 */
export class MemoryLocks implements LockManagerLike {
  private readonly held = new Set<string>();
  private readonly queues = new Map<string, Waiter[]>();

  isHeld(name: string): boolean {
    return this.held.has(name);
  }

  request<T>(
    name: string,
    options: { ifAvailable?: boolean; signal?: AbortSignal },
    callback: (lock: unknown) => T | Promise<T>,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const run = () => {
        this.held.add(name);
        Promise.resolve()
          .then(() => callback({ name, mode: 'exclusive' }))
          .then(
            (value) => {
              this.free(name);
              resolve(value);
            },
            (error: unknown) => {
              this.free(name);
              reject(error);
            },
          );
      };
      const queue = this.queues.get(name) ?? [];
      if (!this.held.has(name) && queue.length === 0) {
        run();
        return;
      }
      if (options.ifAvailable === true) {
        Promise.resolve()
          .then(() => callback(null))
          .then(resolve, reject);
        return;
      }
      const { signal } = options;
      if (signal?.aborted === true) {
        reject(signal.reason);
        return;
      }
      const waiter: Waiter = { grant: run, signal };
      queue.push(waiter);
      this.queues.set(name, queue);
      signal?.addEventListener(
        'abort',
        () => {
          const index = queue.indexOf(waiter);
          if (index === -1) return;
          queue.splice(index, 1);
          reject(signal.reason);
        },
        { once: true },
      );
    });
  }

  private free(name: string): void {
    this.held.delete(name);
    const next = this.queues.get(name)?.shift();
    next?.grant();
  }
}
