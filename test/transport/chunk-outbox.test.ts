import { describe, expect, it } from 'vitest';
import { ChunkOutbox } from '../../src/transport/chunk-outbox.js';

function outboxStream(capacity: number) {
  let outbox: ChunkOutbox<number> | undefined;
  const stream = new ReadableStream<number>(
    {
      start: (controller) => {
        outbox = new ChunkOutbox<number>(controller, capacity);
      },
      pull: () => outbox?.drain(),
    },
    ChunkOutbox.strategy,
  );
  if (outbox === undefined) throw new Error('start did not run synchronously');
  return { stream, outbox };
}

async function readAll<T>(stream: ReadableStream<T>): Promise<T[]> {
  const values: T[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return values;
    values.push(value);
  }
}

const range = (from: number, count: number) => Array.from({ length: count }, (_, index) => from + index);

describe('ChunkOutbox', () => {
  it('keeps at most `capacity` chunks in the stream queue and hands the rest over on pull', async () => {
    const { stream, outbox } = outboxStream(8);
    outbox.pushAll(range(0, 1000));
    outbox.push(1000);
    expect(outbox.pending).toBe(true);
    const reader = stream.getReader();
    const first = await reader.read();
    expect(first.value).toBe(0);
    reader.releaseLock();
    outbox.close();
    expect(await readAll(stream)).toEqual(range(1, 1000));
  });

  it('hands nothing over twice when enqueue re-enters pull (a read was already waiting)', async () => {
    const { stream, outbox } = outboxStream(4);
    const reader = stream.getReader();
    const waiting = reader.read();
    await new Promise((resolve) => setTimeout(resolve, 0)); // the pull that read started has settled
    outbox.pushAll(range(0, 50));
    outbox.pushAll(range(50, 50));
    outbox.close();
    const values = [(await waiting).value as number];
    reader.releaseLock();
    values.push(...(await readAll(stream)));
    expect(values).toEqual(range(0, 100));
  });

  it('closes at once when nothing waits, and clear() drops what waits', async () => {
    const { stream, outbox } = outboxStream(2);
    outbox.pushAll(range(0, 10));
    outbox.clear();
    outbox.close();
    expect(await readAll(stream)).toEqual([0, 1]);
  });

  it('discard() drops what waits but still closes when a close was asked for', async () => {
    const { stream, outbox } = outboxStream(2);
    outbox.pushAll(range(0, 10));
    outbox.close();
    expect(outbox.pending).toBe(true);
    outbox.discard();
    expect(await readAll(stream)).toEqual([0, 1]);
  });
});

interface Piece {
  text: string;
}

/** Pieces merge by joining their text, as the transport joins deltas of one part. */
function mergingStream(capacity: number) {
  let outbox: ChunkOutbox<Piece> | undefined;
  const stream = new ReadableStream<Piece>(
    {
      start: (controller) => {
        outbox = new ChunkOutbox<Piece>(controller, capacity, (into, next) => {
          if (next.text === '|' || into.text === '|') return false;
          into.text += next.text;
          return true;
        });
      },
      pull: () => outbox?.drain(),
    },
    ChunkOutbox.strategy,
  );
  if (outbox === undefined) throw new Error('start did not run synchronously');
  return { stream, outbox };
}

describe('ChunkOutbox merging', () => {
  it('folds a chunk into the one still queued, never into one a reader holds', async () => {
    const { stream, outbox } = mergingStream(8);
    const reader = stream.getReader();
    const waiting = reader.read(); // a reader waits: the next chunk goes straight to it
    await new Promise((resolve) => setTimeout(resolve, 0));
    const first = { text: 'a' };
    outbox.push(first);
    outbox.push({ text: 'b' }); // queued (nothing waits now): not merged into `first`
    outbox.push({ text: 'c' }); // merged into the queued 'b'
    expect((await waiting).value).toBe(first);
    expect(first.text).toBe('a');
    const second = await reader.read();
    expect(second.value?.text).toBe('bc');
    outbox.push({ text: 'd' }); // 'bc' was read: 'd' must not change it
    expect(second.value?.text).toBe('bc');
    outbox.push({ text: '|' });
    outbox.push({ text: 'e' });
    outbox.close();
    reader.releaseLock();
    expect((await readAll(stream)).map((piece) => piece.text)).toEqual(['d', '|', 'e']);
  });

  it('merges what waits beyond the capacity and what pushAll hands over', async () => {
    const { stream, outbox } = mergingStream(1);
    outbox.push({ text: '|' }); // fills the stream's queue
    outbox.push({ text: '|' }); // waits in the outbox
    outbox.push({ text: 'x' });
    outbox.push({ text: 'y' }); // merged into the waiting 'x'
    outbox.pushAll([{ text: '1' }, { text: '2' }, { text: '|' }, { text: '3' }]);
    outbox.close();
    expect((await readAll(stream)).map((piece) => piece.text)).toEqual(['|', '|', 'xy12', '|', '3']);
  });
});
