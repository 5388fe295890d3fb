import { loadVariant, userMessage, type VariantName } from '../clients/client-variant.js';
import { floorTurn } from '../clients/floor-client.js';
import { chatIdFor, type TurnSpec } from '../fixture-turn.js';
import { createSession } from '../session-setup.js';
import { createHashingCollector, drain, verifyHashed } from '../verify-turn.js';
import { type Sample, sampleProcess, startSample } from './measure.js';

/** What the reply must be, by chunk count and text hash (computed by the parent process). */
export interface HashedReply {
  chunkCount: number;
  deltas: number;
  textLength: number;
  textHash: number;
}

export interface LongTurnJob {
  kind: 'long-turn';
  variant: VariantName;
  baseUrl: string;
  warmup: TurnSpec & { expected: HashedReply };
  turn: TurnSpec & { expected: HashedReply };
}

export interface LongTurnResult extends Sample {
  /** The turn's chunks (records). */
  chunks: number;
  /** Chunks the reader received (fewer when text deltas were merged). */
  delivered: number;
  /**
   * Highest RSS seen during the turn, sampled every 10 ms. The process's lifetime peak can
   * predate the turn (start-up), which would hide the turn's own growth.
   */
  turnPeakRssBytes: number;
  /**
   * Heap used plus external memory after a full GC at 90% of the turn, minus the same right
   * before it: what the client still holds for the chunks it has passed on. RSS growth
   * mostly follows the garbage collector's sizing; this does not.
   */
  retainedBytes: number;
}

const RSS_SAMPLE_MS = 10;
/** Where in the turn the retained memory is measured. */
const RETAINED_AT = 0.9;

function heldBytes(): number {
  globalThis.gc?.();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.external;
}

/**
 * One very long turn, read by a consumer that keeps nothing per chunk (a running hash of the
 * text), so the process's RSS growth is the client's own: a client that retains something per
 * chunk grows with the turn, one that does not stays near the floor's.
 */
export async function runLongTurnJob(job: LongTurnJob): Promise<LongTurnResult> {
  const variant = await loadVariant(job.variant);
  const unique = `${job.variant}-${process.pid}`;
  const once = async (spec: TurnSpec & { expected: HashedReply }) => {
    const chatId = chatIdFor(spec.name, unique);
    const { publicAccessToken: token, isCached } = await createSession(job.baseUrl, chatId);
    const context = { baseUrl: job.baseUrl, chatId, token, isCached, message: userMessage('hello') };
    const collector = createHashingCollector();
    const add = collector.add;
    // By text read, not chunks: a client may merge deltas.
    const checkpoint = Math.floor(spec.expected.textLength * RETAINED_AT);
    let retainedBytes = Number.NaN;
    const sample = startSample();
    const before = heldBytes();
    collector.add = (chunk) => {
      add(chunk);
      if (Number.isNaN(retainedBytes) && collector.textLength >= checkpoint)
        retainedBytes = heldBytes() - before;
    };
    let turnPeakRssBytes = sample.baselineRssBytes;
    const sampler = setInterval(() => {
      turnPeakRssBytes = Math.max(turnPeakRssBytes, process.memoryUsage.rss());
    }, RSS_SAMPLE_MS);
    try {
      if (job.variant === 'floor') await floorTurn(context, collector.add);
      else await drain(await variant.send(context), collector);
    } finally {
      clearInterval(sampler);
    }
    turnPeakRssBytes = Math.max(turnPeakRssBytes, process.memoryUsage.rss());
    const result = sampleProcess(sample);
    verifyHashed(`${job.variant}/long-turn/${spec.name}`, spec.expected, collector);
    return {
      ...result,
      chunks: spec.expected.chunkCount,
      delivered: collector.count,
      turnPeakRssBytes,
      retainedBytes,
    };
  };
  await once(job.warmup);
  const result = await once(job.turn);
  variant.dispose?.();
  return result;
}
