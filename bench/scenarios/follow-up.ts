import { runWorkerJob, startFixtureChild } from '../child-process.js';
import type { VariantName } from '../clients/client-variant.js';
import type { ServedTurnSpec } from '../fixture-server.js';
import type { FollowUpJob, FollowUpResult } from '../jobs/follow-up-job.js';
import { median, percentile, rotate } from '../stats.js';

/** The round trip the fixture server adds to every response in this scenario. */
export const FOLLOW_UP_DELAY_MS = 50;
export const FOLLOW_UP_TURNS = 3;

export interface FollowUpTurnFigures {
  /** 1-based turn of the chat. */
  turn: number;
  firstChunkMs: number;
  p90Ms: number;
  samplesMs: number[];
}

export interface FollowUpCell {
  variant: VariantName;
  /** Measured chats (each of `FOLLOW_UP_TURNS` turns). */
  runs: number;
  delayMs: number;
  turns: FollowUpTurnFigures[];
  error?: string;
}

export interface FollowUpOptions {
  /** Chats per variant, split over `rounds` worker processes. */
  runs: number;
  rounds: number;
  variants: VariantName[];
  log: (line: string) => void;
}

/**
 * Scenario 3b: the first chunk of turn 1 and of turn 3 in one chat, against the fixture server
 * with {@link FOLLOW_UP_DELAY_MS} added to every response (a network round trip, which the
 * loopback of scenario 3 hides). The floor of this scenario is `floor-overlap`, which opens its
 * `.out` read (from the previous turn's end) while its append is in flight: no client can
 * show a chunk sooner than one round trip after the send. `floor` (append, then read) shows
 * what one more round trip costs.
 */
export async function benchFollowUp(options: FollowUpOptions): Promise<FollowUpCell[]> {
  const fixtureTurn: ServedTurnSpec = { name: 'follow-up', deltas: 50, batchSize: 1, followUps: true };
  const fixture = await startFixtureChild([fixtureTurn], { responseDelayMs: FOLLOW_UP_DELAY_MS });
  const samples = new Map<VariantName, number[][]>();
  const errors = new Map<VariantName, string>();
  const perRound = Math.max(1, Math.ceil(options.runs / options.rounds));
  try {
    for (let round = 0; round < options.rounds; round++) {
      for (const variant of rotate(options.variants, round)) {
        if (errors.has(variant)) continue;
        try {
          const job: FollowUpJob = {
            kind: 'follow-up',
            variant,
            baseUrl: fixture.url,
            fixtureTurn,
            turns: FOLLOW_UP_TURNS,
            pauseMs: 100,
            warmups: 2,
            runs: perRound,
          };
          const { firstChunkMs } = await runWorkerJob<FollowUpResult>(job);
          const sofar = samples.get(variant) ?? firstChunkMs.map(() => []);
          samples.set(
            variant,
            sofar.map((values, index) => [...values, ...(firstChunkMs[index] ?? [])]),
          );
        } catch (error) {
          errors.set(variant, error instanceof Error ? error.message : String(error));
          options.log(`  follow-up ${variant}: FAILED ${errors.get(variant)}`);
        }
      }
    }
  } finally {
    await fixture.child.stop();
  }
  return options.variants.map((variant) => {
    const perTurn = samples.get(variant) ?? [];
    const cell: FollowUpCell = {
      variant,
      runs: perTurn[0]?.length ?? 0,
      delayMs: FOLLOW_UP_DELAY_MS,
      turns: perTurn.map((values, index) => ({
        turn: index + 1,
        firstChunkMs: median(values),
        p90Ms: percentile(values, 0.9),
        samplesMs: values,
      })),
    };
    const error = errors.get(variant);
    if (error !== undefined) cell.error = error;
    else {
      options.log(
        `  follow-up ${variant}: ${cell.turns.map((t) => `turn ${t.turn} ${t.firstChunkMs.toFixed(2)} ms`).join(', ')}`,
      );
    }
    return cell;
  });
}
