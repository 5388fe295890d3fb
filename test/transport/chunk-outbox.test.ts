import { describe, expect, it } from 'vitest';
import { ChunkOutbox } from '../../src/transport/chunk-outbox.js';

function outboxStream(capacity: number) {
  let outbox: ChunkOutbox<number> | undefined;
  const stream = new ReadableStream<number>(
    {
      start: (controller) => {
        outbox = new ChunkOutbox(controller, capacity);
      },
      pull: () => outbox?.drain(),
    },
    ChunkOutbox.strategy,
  );
  if (outbox === undefined) throw new Error('start did not run synchronously');
  return { stream, outbox };
}

async function readAll(stream: ReadableStream<number>): Promise<number[]> {
  const values: number[] = [];
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
