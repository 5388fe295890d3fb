import type { UIMessageChunk } from 'ai';
import { DurableChatError } from 'durable-chat';
import { loadVariant, userMessage, type VariantName } from '../clients/client-variant.js';
import { chatIdFor, expectedReply, type TurnSpec } from '../fixture-turn.js';
import { createSession } from '../session-setup.js';
import { createCollector, drain, verifyChunks } from '../verify-turn.js';

export interface FirstChunkJob {
  kind: 'first-chunk';
  variant: VariantName;
  baseUrl: string;
  /** Fixture server: the turn every send gets back, checked exactly. */
  fixtureTurn?: TurnSpec;
  /** Dev server: the secret key for session create and the agent to talk to. */
  devServer?: { secretKey: string; taskIdentifier: string };
  warmups: number;
  runs: number;
}

export interface FirstChunkResult {
  /** Per run: ms from the send call to the first `text-delta` chunk. */
  firstChunkMs: number[];
}

function invalid(message: string): DurableChatError {
  return new DurableChatError({ code: 'UNEXPECTED_RESPONSE', message });
}

/**
 * Time to first chunk as `useChat` meets it: the session exists (created untimed, as an
 * app's server would), then the clock runs from `send` to the first text-delta. Each
 * reply is read to its end and checked exactly: the fixture's turn, or the echo agent's
 * `Echo: <prompt>`.
 */
export async function runFirstChunkJob(job: FirstChunkJob): Promise<FirstChunkResult> {
  const variant = await loadVariant(job.variant);
  const firstChunkMs: number[] = [];
  for (let run = -job.warmups; run < job.runs; run++) {
    const turnName = job.fixtureTurn?.name ?? 'echo';
    const chatId = chatIdFor(turnName, `${job.variant}-${process.pid}-${run + job.warmups}`);
    const session = await createSession(job.baseUrl, chatId, job.devServer ?? {});
    const prompt = `bench prompt ${run + job.warmups}`;
    const context = {
      baseUrl: job.baseUrl,
      chatId,
      token: session.publicAccessToken,
      isCached: session.isCached,
      message: userMessage(prompt),
    };
    const collector = createCollector();
    let first: number | undefined;
    const started = performance.now();
    const add = (chunk: UIMessageChunk) => {
      if (first === undefined && chunk.type === 'text-delta') first = performance.now();
      collector.add(chunk);
    };
    await drain(await variant.send(context), { add });
    if (first === undefined) throw invalid(`${job.variant}: the reply had no text-delta`);
    if (job.fixtureTurn !== undefined) {
      verifyChunks(`${job.variant}/first-chunk`, expectedReply(job.fixtureTurn), collector);
    } else if (collector.deltas.join('') !== `Echo: ${prompt}`) {
      throw invalid(`${job.variant}: the echo reply is not "Echo: ${prompt}"`);
    }
    if (run >= 0) firstChunkMs.push(first - started);
  }
  variant.dispose?.();
  return { firstChunkMs };
}
