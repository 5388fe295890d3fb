import { readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_RENDER_THROTTLE_MS, DeltaPacer } from '../../src/session/delta-pacer.js';

const W = DEFAULT_RENDER_THROTTLE_MS;
const text = (delta: string, id = 't1'): UIMessageChunk => ({ type: 'text-delta', id, delta });

/** What the AI SDK's reducer (the one `useChat` runs) makes of a chunk sequence. */
async function reduce(chunks: UIMessageChunk[]): Promise<UIMessage | undefined> {
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream({ stream })) last = message;
  return last === undefined ? undefined : (JSON.parse(JSON.stringify(last)) as UIMessage);
}

interface Timed {
  chunk: UIMessageChunk;
  at: number;
}

/**
 * Runs chunks read at the given times through a pacer, firing its timer when due (as the
 * relay does, before the next read). Returns what went out and when, and the longest time
 * any delta was held (from the read of the oldest delta held to its hand-over).
 */
function paceTimed(input: Timed[], windowMs = W): { out: Timed[]; longestHold: number } {
  const pacer = new DeltaPacer(windowMs);
  const out: Timed[] = [];
  let heldSince: number | undefined;
  let longestHold = 0;
  /** Hands over `chunks` at `at`; anything but `offered` itself was held until now. */
  const step = (chunks: UIMessageChunk[], at: number, offered?: UIMessageChunk) => {
    for (const chunk of chunks) out.push({ chunk, at });
    if (heldSince !== undefined && chunks.some((chunk) => chunk !== offered)) {
      longestHold = Math.max(longestHold, at - heldSince);
      heldSince = undefined;
    }
    if (heldSince === undefined && pacer.due() !== undefined) heldSince = at;
  };
  for (const { chunk, at } of input) {
    const due = pacer.due();
    if (due !== undefined && due <= at) step(pacer.take(due), due);
    step(pacer.offer(chunk, at), at, chunk);
  }
  const due = pacer.due();
  if (due !== undefined) step(pacer.take(due), due);
  return { out, longestHold };
}

const pace = (input: Timed[], windowMs = W) => paceTimed(input, windowMs).out;

describe('DeltaPacer', () => {
  it('hands over the first delta at once, then one merged delta per window, never later than the window', () => {
    const times = [0, 4, 8, 12, 30, 45, 52, 60];
    const out = pace(times.map((at, index) => ({ chunk: text(`d${index} `), at })));
    expect(out.map(({ chunk, at }) => [at, (chunk as { delta: string }).delta])).toEqual([
      [0, 'd0 '],
      [W, 'd1 d2 d3 d4 '],
      [2 * W, 'd5 d6 d7 '],
    ]);
  });

  it('a delta after a pause of a window goes at once (the first token after a tool call is not delayed)', () => {
    const out = pace([
      { chunk: text('a'), at: 0 },
      { chunk: text('b'), at: 10 },
      { chunk: text('c'), at: 200 },
    ]);
    expect(out.map(({ at }) => at)).toEqual([0, W, 200]);
  });

  it('every other chunk goes at once, after the delta held before it', () => {
    const end: UIMessageChunk = { type: 'text-end', id: 't1' };
    const out = pace([
      { chunk: text('a'), at: 0 },
      { chunk: text('b'), at: 5 },
      { chunk: end, at: 6 },
    ]);
    expect(out).toEqual([
      { chunk: text('a'), at: 0 },
      { chunk: text('b'), at: 6 },
      { chunk: end, at: 6 },
    ]);
  });

  it('never merges deltas of different parts or kinds, nor a delta with fields the reducer does not know', () => {
    const odd = { ...text('x'), extra: 1 } as unknown as UIMessageChunk;
    const reasoning: UIMessageChunk = { type: 'reasoning-delta', id: 't1', delta: 'r' };
    const out = pace([
      { chunk: text('a'), at: 0 },
      { chunk: text('b'), at: 1 },
      { chunk: text('c', 't2'), at: 2 },
      { chunk: reasoning, at: 3 },
      { chunk: odd, at: 4 },
    ]);
    expect(out.map(({ chunk }) => chunk)).toEqual([text('a'), text('b'), text('c', 't2'), reasoning, odd]);
  });

  it('window 0 hands over every chunk as it comes', () => {
    const input = [0, 1, 2].map((at) => ({ chunk: text(String(at)), at }));
    expect(pace(input, 0)).toEqual(input);
  });

  it('keeps the final message byte-identical (text, reasoning, provider metadata) and holds no delta past its window', async () => {
    const metadata = fc.option(fc.constantFrom({ p: { a: 1 } }, { p: { b: 2 } }), { nil: undefined });
    const delta = fc.record({
      kind: fc.constantFrom('text' as const, 'reasoning' as const),
      part: fc.constantFrom(0, 1),
      delta: fc.string({ maxLength: 4 }),
      providerMetadata: metadata,
      gap: fc.integer({ min: 0, max: 70 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(delta, { maxLength: 40 }), async (deltas) => {
        const chunks: UIMessageChunk[] = [{ type: 'start', messageId: 'm' }];
        for (const part of [0, 1]) {
          chunks.push({ type: 'text-start', id: `text-${part}` });
          chunks.push({ type: 'reasoning-start', id: `reasoning-${part}` });
        }
        const firstDelta = chunks.length;
        for (const item of deltas) {
          chunks.push({
            type: `${item.kind}-delta`,
            id: `${item.kind}-${item.part}`,
            delta: item.delta,
            ...(item.providerMetadata === undefined ? {} : { providerMetadata: item.providerMetadata }),
          } as UIMessageChunk);
        }
        for (const part of [0, 1]) chunks.push({ type: 'text-end', id: `text-${part}` });
        chunks.push({ type: 'finish' });
        let at = 0;
        const input = chunks.map((chunk, index) => {
          at += deltas[index - firstDelta]?.gap ?? 1;
          return { chunk, at };
        });
        const { out, longestHold } = paceTimed(input);
        expect(await reduce(out.map(({ chunk }) => chunk))).toEqual(await reduce(chunks));
        expect(longestHold).toBeLessThanOrEqual(W);
      }),
      { numRuns: 150 },
    );
  });
});

describe('DeltaPacer with a clock that steps back', () => {
  it('still hands a held delta over within a window of when it was held', () => {
    const pacer = new DeltaPacer(W);
    expect(pacer.offer(text('a'), 1_000)).toEqual([text('a')]);
    // The wall clock stepped back a minute (an NTP correction): the next delta is held from now.
    expect(pacer.offer(text('b'), 1_000 - 60_000)).toEqual([]);
    expect(pacer.due()).toBe(1_000 - 60_000 + W);
  });
});
