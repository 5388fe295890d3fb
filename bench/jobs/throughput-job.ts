import { readUIMessageStream, type UIMessage } from 'ai';
import type { VariantName } from '../clients/client-variant.js';
import { loadVariant, userMessage } from '../clients/client-variant.js';
import { floorTurn } from '../clients/floor-client.js';
import { chatIdFor, expectedReply, type TurnSpec } from '../fixture-turn.js';
import { createSession } from '../session-setup.js';
import { createCollector, drain, verifyChunks, verifyMessage } from '../verify-turn.js';
import { type Sample, sampleProcess, startSample } from './measure.js';

export interface ThroughputJob {
  kind: 'throughput';
  variant: VariantName;
  /** `chunks`: read the transport's stream. `reducer`: through `readUIMessageStream`, as useChat does. */
  consume: 'chunks' | 'reducer';
  baseUrl: string;
  warmup: TurnSpec;
  /** How many times the warm-up turn runs (each in its own chat) before the measured one; default 1. */
  warmupTurns?: number;
  turn: TurnSpec;
}

export interface ThroughputResult extends Sample {
  /** The turn's chunks (records). */
  chunks: number;
  /** Chunks the consumer received (fewer when text deltas were merged); reducer runs: unset. */
  delivered?: number;
}

/**
 * One warm-up turn (so every client runs JIT-compiled code), then one measured turn,
 * checked for the exact text before its figures are reported.
 */
export async function runThroughputJob(job: ThroughputJob): Promise<ThroughputResult> {
  const variant = await loadVariant(job.variant);
  const unique = `${job.variant}-${process.pid}`;
  const once = async (spec: TurnSpec, chat = unique) => {
    const turn = expectedReply(spec);
    const chatId = chatIdFor(spec.name, chat);
    // The create's `isCached` goes along, as an app's route hands it to the browser.
    const { publicAccessToken: token, isCached } = await createSession(job.baseUrl, chatId);
    const context = { baseUrl: job.baseUrl, chatId, token, isCached, message: userMessage('hello') };
    const label = `${job.variant}/${job.consume}/${spec.name}`;
    const sample = startSample();
    if (job.consume === 'reducer') {
      let last: UIMessage | undefined;
      for await (const message of readUIMessageStream({ stream: await variant.send(context) }))
        last = message;
      const result = sampleProcess(sample);
      verifyMessage(label, turn, last);
      return { ...result, chunks: turn.chunkCount };
    }
    const collector = createCollector();
    if (job.variant === 'floor') await floorTurn(context, collector.add);
    else await drain(await variant.send(context), collector);
    const result = sampleProcess(sample);
    verifyChunks(label, turn, collector);
    // Per chunk of the turn as sent, whether the client delivered them one by one or merged.
    return { ...result, chunks: turn.chunkCount, delivered: collector.count };
  };
  for (let index = 0; index < (job.warmupTurns ?? 1); index++)
    await once(job.warmup, index === 0 ? unique : `${unique}-w${index}`);
  const result = await once(job.turn);
  variant.dispose?.();
  return result;
}
