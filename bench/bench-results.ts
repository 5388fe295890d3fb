import type { BundleSizeCell } from './bundle-size.js';
import type { VariantName } from './clients/client-variant.js';
import type { FirstChunkCell } from './scenarios/first-chunk.js';
import type { FollowUpCell } from './scenarios/follow-up.js';
import type { LongTurnCell } from './scenarios/long-turn.js';
import type { RendersCell } from './scenarios/renders.js';
import type { ResumeCell } from './scenarios/resume.js';
import type { ScaleCell } from './scenarios/scale.js';
import type { ThroughputCell } from './scenarios/throughput.js';

/** Everything one run measured: what results.json holds under `results`. */
export interface BenchResults {
  throughput: ThroughputCell[];
  firstChunk: FirstChunkCell[];
  /** Turn 1 and turn 3 of one chat, 50 ms per response. Missing in results written before it. */
  followUp?: FollowUpCell[];
  resume: ResumeCell[];
  renders: RendersCell[];
  scale: ScaleCell[];
  /** Missing in results written before the long-turn scenario existed. */
  longTurn?: LongTurnCell[];
  /** What an app bundles for the client, gzip. Missing in results written before issue 23's size budget. */
  bundleSize?: BundleSizeCell[];
}

/** The cell of `variant` that matches, unless it failed (a failed cell has no figures). */
export function cellOf<T extends { variant: VariantName; error?: string }>(
  cells: T[],
  match: (cell: T) => boolean,
  variant: VariantName,
): T | undefined {
  const cell = cells.find((candidate) => candidate.variant === variant && match(candidate));
  return cell?.error === undefined ? cell : undefined;
}
