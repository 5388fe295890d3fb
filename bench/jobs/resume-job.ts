import type { UIMessageChunk } from 'ai';
import { DurableChatError } from 'durable-chat';
import { loadVariant, userMessage, type VariantName } from '../clients/client-variant.js';
import { floorResumingTurn } from '../clients/floor-client.js';
import type { ServedTurnSpec, SessionStats } from '../fixture-server.js';
import { buildDeltas, chatIdFor, expectedReply, type TurnSpec } from '../fixture-turn.js';
import { createSession } from '../session-setup.js';
import { createCollector, drain, verifyChunks } from '../verify-turn.js';

export interface ResumeJob {
  kind: 'resume';
  variant: VariantName;
  baseUrl: string;
  warmup: TurnSpec;
  /** A turn whose first `.out` connection the server cuts after `cutAfterSeq`. */
  turn: ServedTurnSpec & { cutAfterSeq: number };
  runs: number;
}

export interface ResumeResult {
  /** Per run: ms from the last chunk before the cut to the first chunk after it. */
  gapsMs: number[];
}

async function fetchStats(baseUrl: string, chatId: string): Promise<SessionStats> {
  const response = await fetch(`${baseUrl}/bench/stats/${encodeURIComponent(chatId)}`);
  return (await response.json()) as SessionStats;
}

/** Text length once every delta up to record `seq` has arrived (records 0-2 frame the text). */
function textOffsetAfter(spec: TurnSpec, seq: number): number {
  const deltas = buildDeltas(spec.deltas, spec.seed ?? 42);
  let offset = 0;
  for (let index = 0; index <= seq - FRAME_BEFORE_TEXT && index < deltas.length; index++)
    offset += deltas[index]?.length ?? 0;
  return offset;
}
const FRAME_BEFORE_TEXT = 3;

/**
 * Resume time as the app sees it: the server writes record `cutAfterSeq`, flushes and
 * kills the connection; the gap between that record's text reaching the app and the next
 * record's covers noticing the drop, any backoff, the reconnect and the first byte. Text
 * offsets name the records, so a client that merges deltas is timed the same way.
 */
export async function runResumeJob(job: ResumeJob): Promise<ResumeResult> {
  const variant = await loadVariant(job.variant);
  const gapsMs: number[] = [];
  const turnOnce = async (spec: TurnSpec, run: number) => {
    const chatId = chatIdFor(spec.name, `${job.variant}-${process.pid}-${run}`);
    const { publicAccessToken: token, isCached } = await createSession(job.baseUrl, chatId);
    const context = { baseUrl: job.baseUrl, chatId, token, isCached, message: userMessage('hello') };
    const collector = createCollector();
    const arrivals: number[] = [];
    const cutOffset = textOffsetAfter(spec, job.turn.cutAfterSeq);
    let textLength = 0;
    const onChunk = (chunk: UIMessageChunk) => {
      collector.add(chunk);
      if (chunk.type !== 'text-delta') return;
      const before = textLength;
      textLength += chunk.delta.length;
      // The chunk that completes the cut record's text, then the first one past it.
      if (before < cutOffset && textLength >= cutOffset) arrivals.push(performance.now());
      if (before <= cutOffset && textLength > cutOffset) arrivals.push(performance.now());
    };
    if (job.variant === 'floor') await floorResumingTurn(context, onChunk);
    else await drain(await variant.send(context), { add: onChunk });
    verifyChunks(`${job.variant}/resume/${spec.name}`, expectedReply(spec), collector);
    return { chatId, arrivals };
  };
  await turnOnce(job.warmup, -1);
  for (let run = 0; run < job.runs; run++) {
    const { chatId, arrivals } = await turnOnce(job.turn, run);
    const stats = await fetchStats(job.baseUrl, chatId);
    const resumedFrom = stats.outCursors[1];
    if (stats.outCursors.length < 2 || resumedFrom !== String(job.turn.cutAfterSeq)) {
      throw new DurableChatError({
        code: 'UNEXPECTED_RESPONSE',
        message: `${job.variant} did not resume from the cursor: .out cursors ${JSON.stringify(stats.outCursors)}`,
      });
    }
    const [before, after] = arrivals;
    if (before === undefined || after === undefined) {
      throw new DurableChatError({ code: 'UNEXPECTED_RESPONSE', message: 'resume chunks were not observed' });
    }
    gapsMs.push(after - before);
  }
  variant.dispose?.();
  return { gapsMs };
}
