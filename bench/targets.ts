import { type BenchResults, cellOf } from './bench-results.js';
import { SIZE_TARGET_BYTES } from './bundle-size.js';
import type { VariantName } from './clients/client-variant.js';
import { RENDER_BUDGET } from './scenarios/renders.js';
import { formatNumber, markdownTable, ratio } from './stats.js';

export interface TargetCheck {
  target: string;
  measured: string;
  met: boolean | undefined;
}

function check(
  target: string,
  measured: number,
  limit: number,
  format: (value: number) => string,
): TargetCheck {
  return {
    target,
    measured: format(measured),
    met: Number.isFinite(measured) ? measured <= limit : undefined,
  };
}

/** The targets, each with the figure that decides it (undefined: not measured). */
export function targetChecks(results: BenchResults): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const times = (value: number) => `${formatNumber(value, 2)}x`;
  for (const shape of [...new Set(results.throughput.map((cell) => cell.shape))]) {
    const pick = (variant: VariantName) =>
      cellOf(results.throughput, (c) => c.shape === shape && c.consume === 'chunks', variant);
    const floor = pick('floor')?.cpuUsPerChunk ?? Number.NaN;
    const floorStream = pick('floor-stream')?.cpuUsPerChunk ?? Number.NaN;
    const platform = pick('trigger');
    // The defaults, then one chunk per record (`coalesceDeltas: false`), like both floors.
    for (const variant of ['durable-chat', 'durable-chat-unmerged'] as const) {
      const ours = pick(variant);
      if (ours === undefined && variant === 'durable-chat-unmerged') continue;
      const perChunk = ours?.cpuUsPerChunk ?? Number.NaN;
      const which = variant === 'durable-chat' ? shape : `${shape}, coalesceDeltas: false`;
      checks.push(check(`CPU/chunk ≤ 1.3x floor (${which})`, ratio(perChunk, floor), 1.3, times));
      checks.push(
        check(
          `CPU/chunk ≤ 1.15x floor + ReadableStream (${which})`,
          ratio(perChunk, floorStream),
          1.15,
          times,
        ),
      );
    }
    const ours = pick('durable-chat');
    checks.push(
      check(
        `CPU/chunk well under the platform's (${shape}, ≤ 0.75x)`,
        ratio(ours?.cpuUsPerChunk ?? Number.NaN, platform?.cpuUsPerChunk ?? Number.NaN),
        0.75,
        times,
      ),
    );
    checks.push(
      check(
        `peak RSS ≤ platform's (${shape})`,
        ratio(ours?.peakRssBytes ?? Number.NaN, platform?.peakRssBytes ?? Number.NaN),
        1,
        times,
      ),
    );
  }
  for (const server of ['dev-server', 'fixture'] as const) {
    const ours = cellOf(results.firstChunk, (c) => c.server === server, 'durable-chat');
    const raw = cellOf(results.firstChunk, (c) => c.server === server, 'floor');
    checks.push(
      check(
        `first chunk ≤ 1.1x raw fetch (${server})`,
        ratio(ours?.firstChunkMs ?? Number.NaN, raw?.firstChunkMs ?? Number.NaN),
        1.1,
        times,
      ),
    );
  }
  // Issue 23: a follow-up turn pays no round trip more than the floor that reads while it
  // appends; turn 1 neither.
  const followUp = (variant: VariantName, turn: number) =>
    cellOf(results.followUp ?? [], () => true, variant)?.turns.find((t) => t.turn === turn)?.firstChunkMs ??
    Number.NaN;
  for (const turn of [1, 3]) {
    checks.push(
      check(
        `first chunk of turn ${turn} ≤ 1.05x floor (one chat, 50 ms per response)`,
        ratio(followUp('durable-chat', turn), followUp('floor-overlap', turn)),
        1.05,
        times,
      ),
    );
  }
  // Issue 23: against the floor that, like durable-chat, opens its read while the append is in
  // flight (c″), measured in the same run; and nothing kept per chunk over a long turn.
  const scale = (variant: VariantName) => cellOf(results.scale, () => true, variant);
  checks.push(
    check(
      `RSS per concurrent chat ≤ 1.15x the floor with the read opened during the append (${formatNumber(scale('durable-chat')?.sessions ?? Number.NaN, 0)} chats)`,
      ratio(
        scale('durable-chat')?.rssPerSessionBytes ?? Number.NaN,
        scale('floor-overlap')?.rssPerSessionBytes ?? Number.NaN,
      ),
      1.15,
      times,
    ),
  );
  const long = (variant: VariantName) => cellOf(results.longTurn ?? [], () => true, variant);
  checks.push(
    check(
      `long turn: held after a GC at 90 % ≤ 1.2x floor's (${formatNumber(long('floor')?.deltas ?? Number.NaN, 0)} deltas)`,
      ratio(long('durable-chat')?.retainedBytes ?? Number.NaN, long('floor')?.retainedBytes ?? Number.NaN),
      1.2,
      times,
    ),
  );
  for (const cutMode of ['destroy', 'error-event'] as const) {
    const ours = cellOf(results.resume, (c) => c.cutMode === cutMode, 'durable-chat');
    checks.push(
      check(
        `resume < 50 ms (${cutMode}, worst drop)`,
        ours?.maxGapMs ?? Number.NaN,
        50,
        (v) => `${formatNumber(v, 1)} ms`,
      ),
    );
  }
  // Issue 23: at most one commit per 40 ms window while text streams plus 12 per turn (status
  // and part boundaries), p99 added latency at most 50 ms, and at a burst at most 25 per 1,000.
  for (const cell of results.renders.filter((c) => c.throttle === 'default')) {
    const where = `${cell.path}, default, ${cell.pacing}`;
    const failed = cell.error !== undefined;
    checks.push(
      check(
        `commits ≤ one per ${RENDER_BUDGET.windowMs} ms window + ${RENDER_BUDGET.perTurn} per turn (${where}; commits over one per window)`,
        failed ? Number.NaN : (cell.commitsOverWindows?.median ?? Number.NaN),
        RENDER_BUDGET.perTurn,
        (v) => formatNumber(v, 0),
      ),
    );
    checks.push(
      check(
        `added latency ≤ 50 ms (${where}, p99)`,
        failed ? Number.NaN : cell.addedLatency.p99Ms,
        50,
        (v) => `${formatNumber(v, 1)} ms`,
      ),
    );
    if (cell.pacing === 'burst') {
      checks.push(
        check(
          `renders ≤ 25 per 1,000 chunks at a burst (${cell.path}, default)`,
          failed ? Number.NaN : cell.rendersPerThousandChunks,
          25,
          (v) => formatNumber(v, 1),
        ),
      );
    }
  }
  const bundle = results.bundleSize?.find(
    (cell) => cell.name.startsWith('durable-chat:') && cell.error === undefined,
  );
  checks.push(
    check(
      `gzip of the transport + useChatSession + route client ≤ ${formatNumber(SIZE_TARGET_BYTES / 1024, 0)} KB`,
      bundle?.gzipBytes ?? Number.NaN,
      SIZE_TARGET_BYTES,
      (v) => `${formatNumber(v / 1024, 1)} KB`,
    ),
  );
  return checks;
}

export function targetsTable(checks: TargetCheck[]): string {
  return markdownTable(
    ['target', 'measured', 'met'],
    checks.map((item) => [
      item.target,
      item.measured,
      item.met === undefined ? 'not measured' : item.met ? 'yes' : 'NO',
    ]),
  );
}
