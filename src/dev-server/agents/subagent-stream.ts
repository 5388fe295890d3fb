import type { UIMessageChunk } from 'ai';
import type { UIMessageStreamSource } from './define-agent.js';

/** Chunks per `data-subagent` batch. */
const CHUNKS_PER_BATCH = 4;

/**
 * A turn's side channel for sub-agent output: a tool's `execute` writes `data-subagent`
 * batches into it while the parent's stream waits for the tool, and `merge` interleaves
 * them with the parent's chunks in arrival order.
 */
export class SubagentChannel {
  private queue: UIMessageChunk[] = [];
  private wake: (() => void) | undefined;

  /** Streams a sub-agent's UI chunks as transient `data-subagent` batches (`seq` from 0 per tool call). */
  async pipe(toolCallId: string, source: UIMessageStreamSource): Promise<void> {
    let seq = 0;
    let chunks: UIMessageChunk[] = [];
    const flush = () => {
      if (chunks.length === 0) return;
      this.push({ type: 'data-subagent', data: { toolCallId, seq, chunks }, transient: true });
      seq += 1;
      chunks = [];
    };
    const stream = source.toUIMessageStream({
      originalMessages: [],
      generateMessageId: () => `sub_${toolCallId}`,
    });
    for await (const chunk of stream as AsyncIterable<UIMessageChunk>) {
      chunks.push(chunk);
      if (chunks.length >= CHUNKS_PER_BATCH) flush();
    }
    flush();
  }

  /** The parent's chunks with the sub-agent batches between them. */
  async *merge(parent: AsyncIterable<UIMessageChunk>): AsyncGenerator<UIMessageChunk> {
    const iterator = parent[Symbol.asyncIterator]();
    let next = iterator.next();
    for (;;) {
      const side = new Promise<'side'>((resolve) => {
        this.wake = () => resolve('side');
      });
      if (this.queue.length > 0) this.wake?.();
      const winner = await Promise.race([next, side]);
      this.wake = undefined;
      yield* this.drain();
      if (winner === 'side') continue;
      if (winner.done === true) return;
      yield winner.value;
      next = iterator.next();
    }
  }

  private *drain(): Generator<UIMessageChunk> {
    while (this.queue.length > 0) {
      const chunk = this.queue.shift();
      if (chunk !== undefined) yield chunk;
    }
  }

  private push(chunk: UIMessageChunk): void {
    this.queue.push(chunk);
    this.wake?.();
  }
}
