import { loadVariant, userMessage, type VariantName } from '../clients/client-variant.js';
import { floorTurn } from '../clients/floor-client.js';
import type { ServedTurnSpec } from '../fixture-server.js';
import { chatIdFor, expectedReply } from '../fixture-turn.js';
import { createSession } from '../session-setup.js';
import { createCollector, drain, verifyChunks } from '../verify-turn.js';
import { type Sample, sampleProcess, startSample } from './measure.js';

export interface ScaleJob {
  kind: 'scale';
  variant: VariantName;
  baseUrl: string;
  sessions: number;
  /** A paced turn: every session streams it at model speed, all at once. */
  turn: ServedTurnSpec;
}

export interface ScaleResult extends Sample {
  sessions: number;
  chunks: number;
}

const CREATE_CONCURRENCY = 50;

/**
 * Many chats streaming at once in one process (a server-side consumer or a dashboard):
 * one client object for all sessions where the client allows it, sessions created
 * untimed, then every send started together and every reply checked exactly.
 */
export async function runScaleJob(job: ScaleJob): Promise<ScaleResult> {
  const variant = await loadVariant(job.variant);
  const expected = expectedReply(job.turn);
  const chatIds = Array.from({ length: job.sessions }, (_, index) =>
    chatIdFor(job.turn.name, `${job.variant}-${process.pid}-${index}`),
  );
  const tokens: string[] = [];
  for (let index = 0; index < chatIds.length; index += CREATE_CONCURRENCY) {
    const slice = chatIds.slice(index, index + CREATE_CONCURRENCY);
    const created = await Promise.all(slice.map((chatId) => createSession(job.baseUrl, chatId)));
    tokens.push(...created.map((session) => session.publicAccessToken));
  }
  const sample = startSample();
  const collectors = await Promise.all(
    chatIds.map(async (chatId, index) => {
      const context = {
        baseUrl: job.baseUrl,
        chatId,
        token: tokens[index] ?? '',
        message: userMessage('hi'),
      };
      const collector = createCollector();
      if (job.variant === 'floor') await floorTurn(context, collector.add);
      else await drain(await variant.send(context), collector);
      return collector;
    }),
  );
  const result = sampleProcess(sample);
  let chunks = 0;
  for (const collector of collectors) {
    verifyChunks(`${job.variant}/scale`, expected, collector);
    chunks += collector.count;
  }
  variant.dispose?.();
  return { ...result, sessions: job.sessions, chunks };
}
