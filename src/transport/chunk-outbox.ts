/**
 * Hands chunks to a `ReadableStream` whose high-water mark is 0, keeping at most `capacity`
 * in the stream's own queue; the rest wait here and move over on the next `pull`.
 *
 * Why a zero high-water mark: the stream then calls `pull` only when a reader waits on an
 * empty queue. With a positive one it calls `pull` (a promise and a microtask) after every
 * read that leaves the queue below the mark, i.e. once per chunk on the hot path. Why a
 * bound: Node's web-streams queue drops its head with `Array.shift`, so a long backlog
 * enqueued at once makes every read cost the queue's length, and a consumer that stops
 * reading must pause the network read instead of piling chunks up.
 */
export class ChunkOutbox<T> {
  #items: T[] = [];
  #next = 0;
  #closeWhenEmpty = false;
  #draining = false;
  #onClosed: (() => void) | undefined;
  /** Chunks wait here, none go to the stream (an earlier reply is still being shown). */
  #held = false;
  /** Set once the stream is closed or its chunks dropped; `#onDone` wait for that. */
  #done = false;
  #onDone: (() => void)[] | undefined;
  /**
   * Chunks that may still be enqueued without asking the stream: read once when it runs
   * out, then counted down. Reads only make more room, so the count never overstates it.
   */
  #room = 0;
  /**
   * The chunk enqueued last. While the stream's queue is not empty it is still in it (reads
   * take from the head), unread, so a later chunk may be merged into it.
   */
  #tail: T | undefined;

  /** The stream's queuing strategy this outbox expects. */
  static readonly strategy: QueuingStrategy<unknown> = { highWaterMark: 0 };
  readonly #controller: ReadableStreamDefaultController<T>;
  readonly #merge?: (into: T, next: T) => boolean;

  constructor(
    controller: ReadableStreamDefaultController<T>,
    /** Chunks the stream's own queue may hold before the rest wait here. */
    readonly capacity: number,
    /**
     * Folds `next` into `into`, a chunk nobody has read yet, and returns true; or returns
     * false to keep them apart. Only ever offered chunks still queued, so it adds no latency.
     */
    merge?: (into: T, next: T) => boolean,
  ) {
    this.#controller = controller;
    this.#merge = merge;
  }

  /** With a zero high-water mark, `desiredSize` is minus the stream queue's length. */
  #streamQueueEmpty(): boolean {
    const size = this.#controller.desiredSize;
    return size === null || size >= 0;
  }

  /** True when chunks wait here or the stream's queue is full: the producer should pause. */
  get full(): boolean {
    if (this.pending) return true;
    const size = this.#controller.desiredSize;
    return size !== null && size <= -this.capacity;
  }

  /** True while chunks wait here: whatever arrives later must queue behind them. */
  get pending(): boolean {
    return this.#next < this.#items.length;
  }

  /**
   * Holds every chunk here until `until` settles, then hands them over: the reply of a send made
   * while an earlier reply still streams reaches the consumer after that one has (not interleaved
   * with it, nor before it in a consumer that reads both streams at once).
   */
  holdUntil(until: Promise<unknown>, released: () => void): void {
    this.#held = true;
    const release = () => {
      this.#held = false;
      this.drain();
      released();
    };
    until.then(release, release);
  }

  /** Resolves once the stream is closed, or what it was to carry was dropped (cancel, error, discard). */
  whenDone(): Promise<void> {
    if (this.#done) return Promise.resolve();
    return new Promise((resolve) => {
      this.#onDone ??= [];
      this.#onDone.push(resolve);
    });
  }

  #finish(): void {
    if (this.#done) return;
    this.#done = true;
    const waiting = this.#onDone;
    this.#onDone = undefined;
    if (waiting !== undefined) for (const resolve of waiting) resolve();
  }

  push(chunk: T): void {
    const merge = this.#merge;
    if (this.pending || this.#held) {
      const last = this.#items[this.#items.length - 1];
      if (last === undefined || merge === undefined || !merge(last, chunk)) this.#items.push(chunk);
      return;
    }
    const tail = this.#tail;
    if (tail !== undefined && merge !== undefined) {
      const size = this.#controller.desiredSize;
      if (size !== null && size < 0 && merge(tail, chunk)) return;
    }
    if (this.#room <= 0) this.#room = this.#roomNow();
    if (this.#room > 0) {
      this.#room--;
      this.#controller.enqueue(chunk);
      this.#tail = chunk;
      return;
    }
    this.#items.push(chunk);
  }

  #roomNow(): number {
    const size = this.#controller.desiredSize;
    return size === null ? 0 : this.capacity + size;
  }

  /** Takes ownership of `chunks` (no copy when nothing is waiting). */
  pushAll(chunks: T[]): void {
    if (chunks.length === 0) return;
    if (this.pending) for (const chunk of chunks) this.push(chunk);
    else {
      if (this.#merge !== undefined) compact(chunks, this.#merge);
      this.#items = chunks;
      this.#next = 0;
    }
    this.drain();
  }

  /**
   * Moves what fits into the stream; closes it once empty if `close()` was asked meanwhile.
   * `enqueue` can call `pull` (and so this) synchronously: the position is stored before each
   * hand-over and a nested call returns at once, so no chunk is handed over twice.
   */
  drain(): void {
    if (this.#draining || this.#held) return;
    this.#draining = true;
    try {
      const controller = this.#controller;
      this.#room = this.#roomNow();
      while (this.#next < this.#items.length && this.#room > 0) {
        const chunk = this.#items[this.#next] as T;
        this.#next++;
        this.#room--;
        controller.enqueue(chunk);
        this.#tail = chunk;
      }
    } finally {
      this.#draining = false;
    }
    this.#settle();
  }

  #settle(): void {
    if (this.#next >= this.#items.length) {
      this.#items = [];
      this.#next = 0;
      if (this.#closeWhenEmpty && this.#streamQueueEmpty()) {
        this.#closeWhenEmpty = false;
        this.#controller.close();
        this.#closed();
        this.#finish();
      }
    } else if (this.#next > 4096 && this.#next * 2 > this.#items.length) {
      // Keep a long-lived backlog from holding what was already handed over.
      this.#items = this.#items.slice(this.#next);
      this.#next = 0;
    }
  }

  /**
   * Closes the stream after the waiting chunks have been handed over (at once if none wait);
   * `onClosed` runs then: what must wait until the consumer has every chunk (the cursor
   * bookkeeping) waits for it.
   */
  close(onClosed?: () => void): void {
    this.#onClosed = onClosed;
    this.#room = 0;
    this.#tail = undefined;
    if (this.pending || !this.#streamQueueEmpty()) this.#closeWhenEmpty = true;
    else {
      this.#controller.close();
      this.#closed();
      this.#finish();
    }
  }

  #closed(): void {
    const onClosed = this.#onClosed;
    this.#onClosed = undefined;
    onClosed?.();
  }

  /** Nobody will read the stream: drops what waits, but a close already asked for still happens. */
  discard(): void {
    const close = this.#closeWhenEmpty;
    const onClosed = this.#onClosed;
    this.clear();
    if (close) {
      this.#controller.close();
      onClosed?.();
    }
  }

  /** Drops what waits (the stream errored or was cancelled). */
  clear(): void {
    this.#room = 0;
    this.#tail = undefined;
    this.#items = [];
    this.#next = 0;
    this.#closeWhenEmpty = false;
    this.#onClosed = undefined;
    this.#finish();
  }
}

/** Folds runs of mergeable neighbours together in place. */
function compact<T>(chunks: T[], merge: (into: T, next: T) => boolean): void {
  let kept = 0;
  for (let index = 0; index < chunks.length; index++) {
    const chunk = chunks[index] as T;
    if (kept > 0 && merge(chunks[kept - 1] as T, chunk)) continue;
    chunks[kept++] = chunk;
  }
  chunks.length = kept;
}
