import type { ClassifiedRecord } from '../protocol/records.js';
import { listenForAbort } from './environment.js';
import type { OutReadHandlers } from './out-reader.js';

/** Reported in `readOut()` when the first record after the cursor is past `cursor + 1`. */
export interface TrimmedNotice {
  kind: 'trimmed';
  cursor: number;
  firstSeqNum: number;
}

export type ReadOutItem = ClassifiedRecord | TrimmedNotice;

/** Items queued for a slow consumer before the network read pauses. */
const QUEUE_LIMIT = 256;

/**
 * Turns the push-based reader into an async iterable. Records queue while the consumer is
 * busy (they are already in memory once the batch has arrived). `run` starts the read
 * with the handlers and a signal that aborts when the consumer stops iterating.
 */
export function iterateOut(
  run: (handlers: OutReadHandlers, signal: AbortSignal) => Promise<unknown>,
  outer: AbortSignal | undefined,
  /** Called with each record's `seq_num` as the consumer takes it (the cursor follows consumption). */
  consumed: (seqNum: number) => void,
): AsyncIterable<ReadOutItem> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<ReadOutItem> {
      const controller = new AbortController();
      const onOuterAbort = () => controller.abort(outer?.reason);
      listenForAbort(outer, onOuterAbort);
      let queue: ReadOutItem[] = [];
      let head = 0;
      let finished = false;
      let resumeReader: (() => void) | undefined;
      let failure: { error: unknown } | undefined;
      let wake: (() => void) | undefined;
      const notify = () => {
        const resolve = wake;
        wake = undefined;
        resolve?.();
      };
      run(
        {
          onRecord(record) {
            queue.push(record);
            notify();
            return undefined;
          },
          onTrimmed(cursor, firstSeqNum) {
            queue.push({ kind: 'trimmed', cursor, firstSeqNum });
            notify();
          },
          // A contradicted cursor jump: what came after the rewind point is not to be trusted.
          onRewind(cursor) {
            queue = queue
              .slice(head)
              .filter((item) => item.kind === 'trimmed' || (cursor !== undefined && item.seqNum <= cursor));
            head = 0;
          },
          // Bounded: a consumer that falls behind pauses the read instead of piling records up.
          waitForCapacity() {
            if (queue.length - head < QUEUE_LIMIT || controller.signal.aborted) return undefined;
            return new Promise<void>((resolve) => {
              resumeReader = resolve;
            });
          },
        },
        controller.signal,
      ).then(
        () => {
          finished = true;
          notify();
        },
        (error: unknown) => {
          failure = { error };
          finished = true;
          notify();
        },
      );
      const wakeReader = () => {
        const resume = resumeReader;
        resumeReader = undefined;
        resume?.();
      };
      const stop = () => {
        outer?.removeEventListener('abort', onOuterAbort);
        controller.abort();
        wakeReader();
      };
      controller.signal.addEventListener('abort', wakeReader, { once: true });
      return {
        async next(): Promise<IteratorResult<ReadOutItem>> {
          for (;;) {
            const item = head < queue.length ? queue[head++] : undefined;
            if (head === queue.length) {
              queue = [];
              head = 0;
            }
            if (resumeReader !== undefined && queue.length - head < QUEUE_LIMIT / 2) wakeReader();
            if (item !== undefined) {
              if (item.kind !== 'trimmed') consumed(item.seqNum);
              return { done: false, value: item };
            }
            if (failure !== undefined) {
              stop();
              throw failure.error;
            }
            if (finished) {
              stop();
              return { done: true, value: undefined };
            }
            await new Promise<void>((resolve) => {
              wake = resolve;
            });
          }
        },
        async return(): Promise<IteratorResult<ReadOutItem>> {
          stop();
          return { done: true, value: undefined };
        },
      };
    },
  };
}
