import type { UIMessageChunk } from 'ai';
import { ValidationError } from '../../errors/validation-error.js';
import type { DevServerLogger } from '../logger.js';
import type { Session } from '../store/session.js';
import { writeSerialisedChunks } from './out-writer.js';

export interface PipeOptions {
  /** Aborted by stop, crash or upgrade: reading ends at once. */
  signal: AbortSignal;
  /** Given to a `start` chunk that carries no `messageId`. */
  messageId: string;
  /** Fault injection: stop after this many chunks (they are all written first; `0`: before the first). */
  interruptAfter?: number;
  logger: DevServerLogger;
}

export interface PipeResult {
  /** Every chunk written, in order (the turn's message is reduced from them). */
  chunks: UIMessageChunk[];
  /** True when `interruptAfter` was reached. */
  interrupted: boolean;
  /** The producer failed; the chunks before the failure were written. */
  error: unknown;
}

const ABORTED = Symbol('aborted');

/**
 * Copies an agent's chunks to `.out`. Chunks that arrive while a write is pending are
 * coalesced into one append (one `batch` event per reader), flushed once per event-loop
 * turn, so a fast producer yields large batches and a slow one yields live single records.
 */
export async function pipeChunks(
  session: Session,
  source: AsyncIterable<UIMessageChunk>,
  options: PipeOptions,
): Promise<PipeResult> {
  const chunks: UIMessageChunk[] = [];
  let pending: string[] = [];
  let flushScheduled = false;
  const flush = () => {
    flushScheduled = false;
    if (pending.length === 0) return;
    const batch = pending;
    pending = [];
    writeSerialisedChunks(session, batch);
  };
  // One abort listener for the whole turn wakes whichever read is pending (racing every read
  // against one shared promise would pile a reaction per chunk onto it).
  let wake: ((value: typeof ABORTED) => void) | undefined;
  const onAbort = () => wake?.(ABORTED);
  options.signal.addEventListener('abort', onAbort, { once: true });
  const iterator = source[Symbol.asyncIterator]();
  const read = () =>
    new Promise<IteratorResult<UIMessageChunk> | typeof ABORTED>((resolve, reject) => {
      if (options.signal.aborted) return resolve(ABORTED);
      wake = resolve;
      iterator.next().then(resolve, reject);
    });
  const result: PipeResult = { chunks, interrupted: false, error: undefined };
  try {
    while (true) {
      if (options.interruptAfter !== undefined && options.interruptAfter <= 0) {
        result.interrupted = true;
        break;
      }
      const next = await read();
      if (next === ABORTED || next.done === true) break;
      let chunk = next.value;
      if (chunk.type === 'start' && chunk.messageId === undefined)
        chunk = { ...chunk, messageId: options.messageId };
      // Serialised here, not in the deferred flush: a chunk JSON cannot encode (a BigInt, a
      // cycle) fails this turn instead of throwing where nothing catches it (the whole server).
      pending.push(serialiseChunk(chunk));
      chunks.push(chunk);
      if (!flushScheduled) {
        flushScheduled = true;
        setImmediate(flush);
      }
      if (options.interruptAfter !== undefined && chunks.length >= options.interruptAfter) {
        result.interrupted = true;
        break;
      }
    }
  } catch (error) {
    result.error = error;
  } finally {
    options.signal.removeEventListener('abort', onAbort);
    wake = undefined;
    flush();
    // Ends the producer (aborts a `streamText` call); not awaited, it may be mid-read.
    iterator
      .return?.()
      ?.catch((error: unknown) => options.logger.warn('an agent stream failed while closing', error));
  }
  return result;
}

function serialiseChunk(chunk: UIMessageChunk): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(chunk);
  } catch (cause) {
    throw new ValidationError({
      field: 'chunk',
      message: `the agent wrote a ${describeType(chunk)} chunk that JSON cannot serialise (${cause instanceof Error ? cause.message : String(cause)})`,
    });
  }
  if (json === undefined || !json.startsWith('{')) {
    throw new ValidationError({
      field: 'chunk',
      message: 'the agent wrote a chunk that is not a JSON object',
    });
  }
  return json;
}

function describeType(chunk: UIMessageChunk): string {
  return typeof chunk.type === 'string' ? `\`${chunk.type.slice(0, 64)}\`` : 'untyped';
}
