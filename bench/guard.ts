import { cellOf } from './bench-results.js';
import type { ThroughputCell } from './scenarios/throughput.js';
import { ratio } from './stats.js';

/** `npm run bench -- --quick` fails when durable-chat's CPU per chunk passes this multiple of the floor's. */
export const CPU_GUARD_RATIO = 1.5;

export interface GuardViolation {
  shape: string;
  ratio: number;
}

/**
 * Shapes where durable-chat (defaults, chunks read directly) used more than
 * `CPU_GUARD_RATIO` times the floor's CPU per chunk in the same run. Ratios only: absolute
 * times differ from machine to machine; a missing cell (a failed run) is reported elsewhere.
 */
export function cpuGuardViolations(cells: ThroughputCell[]): GuardViolation[] {
  const violations: GuardViolation[] = [];
  for (const shape of [...new Set(cells.map((cell) => cell.shape))]) {
    const pick = (variant: 'durable-chat' | 'floor') =>
      cellOf(cells, (c) => c.shape === shape && c.consume === 'chunks', variant)?.cpuUsPerChunk;
    const ours = pick('durable-chat');
    const floor = pick('floor');
    if (ours === undefined || floor === undefined) continue;
    const measured = ratio(ours, floor);
    if (measured > CPU_GUARD_RATIO) violations.push({ shape, ratio: measured });
  }
  return violations;
}
