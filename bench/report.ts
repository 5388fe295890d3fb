import { type BenchResults, cellOf } from './bench-results.js';
import type { BundleSizeCell } from './bundle-size.js';
import type { VariantName } from './clients/client-variant.js';
import type { FirstChunkCell } from './scenarios/first-chunk.js';
import type { FollowUpCell } from './scenarios/follow-up.js';
import type { LongTurnCell } from './scenarios/long-turn.js';
import type { RendersCell } from './scenarios/renders.js';
import type { ResumeCell } from './scenarios/resume.js';
import type { ScaleCell } from './scenarios/scale.js';
import type { ThroughputCell } from './scenarios/throughput.js';
import { formatMiB, formatNumber, markdownTable, ratio } from './stats.js';
import { targetChecks, targetsTable } from './targets.js';

const LABEL: Record<VariantName, string> = {
  'durable-chat': '(a) durable-chat `SessionChatTransport`',
  'durable-chat-unmerged': '(a′) durable-chat, `coalesceDeltas: false`',
  'durable-chat-devtools': '(a″) durable-chat, devtools panel open (recording)',
  'durable-chat-baseline': '(a‴) durable-chat, another build (`DURABLE_CHAT_BASELINE`)',
  'durable-chat-baseline-unmerged': '(a⁗) the other build, `coalesceDeltas: false`',
  trigger: '(b) `TriggerChatTransport`',
  floor: '(c) floor: eventsource-parser + JSON.parse',
  'floor-stream': '(c′) floor + a ReadableStream (the ChatTransport shape)',
  'floor-overlap': '(c″) floor + ReadableStream, read opened while the append is in flight',
};

export function throughputTable(cells: ThroughputCell[], consume: ThroughputCell['consume']): string {
  const rows = cells
    .filter((cell) => cell.consume === consume)
    .map((cell) => {
      const floor = cellOf(cells, (c) => c.shape === cell.shape && c.consume === consume, 'floor');
      const platform = cellOf(cells, (c) => c.shape === cell.shape && c.consume === consume, 'trigger');
      const floorStream = cellOf(
        cells,
        (c) => c.shape === cell.shape && c.consume === consume,
        'floor-stream',
      );
      if (cell.error !== undefined)
        return [cell.shape, LABEL[cell.variant], `FAILED: ${cell.error}`, '', '', '', '', '', '', '', ''];
      return [
        cell.shape,
        LABEL[cell.variant],
        formatNumber(cell.wallMs, 0),
        formatNumber(cell.chunksPerSecond, 0),
        consume === 'chunks' ? formatNumber(cell.deliveredChunks, 0) : '',
        formatNumber(cell.cpuUsPerChunk, 2),
        formatMiB(cell.peakRssBytes),
        formatMiB(cell.turnRssBytes),
        formatNumber(ratio(cell.cpuUsPerChunk, floor?.cpuUsPerChunk ?? Number.NaN), 2),
        consume === 'chunks'
          ? formatNumber(ratio(cell.cpuUsPerChunk, floorStream?.cpuUsPerChunk ?? Number.NaN), 2)
          : '',
        formatNumber(ratio(cell.cpuUsPerChunk, platform?.cpuUsPerChunk ?? Number.NaN), 2),
      ];
    });
  return markdownTable(
    [
      'records/batch',
      'client',
      'wall ms',
      'chunks/s',
      'chunks delivered',
      'CPU µs/chunk',
      'peak RSS',
      'RSS growth',
      'CPU ÷ floor',
      'CPU ÷ floor + stream',
      'CPU ÷ platform',
    ],
    rows,
  );
}

export function firstChunkTable(cells: FirstChunkCell[]): string {
  const rows = cells.map((cell) => {
    const floor = cellOf(cells, (c) => c.server === cell.server, 'floor');
    if (cell.error !== undefined) return [cell.server, LABEL[cell.variant], `n/a: ${cell.error}`, '', '', ''];
    return [
      cell.server,
      LABEL[cell.variant],
      String(cell.runs),
      formatNumber(cell.firstChunkMs, 2),
      formatNumber(cell.p90Ms, 2),
      formatNumber(ratio(cell.firstChunkMs, floor?.firstChunkMs ?? Number.NaN), 2),
    ];
  });
  return markdownTable(['server', 'client', 'sends', 'median ms', 'p90 ms', '÷ raw fetch'], rows);
}

/** The floor of the follow-up scenario: reads while it appends, from the previous turn's end. */
export const FOLLOW_UP_FLOOR: VariantName = 'floor-overlap';

export function followUpTable(cells: FollowUpCell[]): string {
  const floor = cellOf(cells, () => true, FOLLOW_UP_FLOOR);
  const floorOf = (turn: number) => floor?.turns.find((t) => t.turn === turn)?.firstChunkMs ?? Number.NaN;
  const rows = cells.map((cell) => {
    if (cell.error !== undefined)
      return [LABEL[cell.variant], `FAILED: ${cell.error}`, '', '', '', '', '', ''];
    const figures = (turn: number) => {
      const measured = cell.turns.find((t) => t.turn === turn);
      return [
        formatNumber(measured?.firstChunkMs ?? Number.NaN, 1),
        formatNumber(measured?.p90Ms ?? Number.NaN, 1),
        formatNumber(ratio(measured?.firstChunkMs ?? Number.NaN, floorOf(turn)), 2),
      ];
    };
    return [LABEL[cell.variant], String(cell.runs), ...figures(1), ...figures(3)];
  });
  return markdownTable(
    ['client', 'chats', 'turn 1 median ms', 'p90', '÷ floor', 'turn 3 median ms', 'p90', '÷ floor'],
    rows,
  );
}

export function resumeTable(cells: ResumeCell[]): string {
  const rows = cells.map((cell) =>
    cell.error !== undefined
      ? [cell.cutMode, LABEL[cell.variant], `FAILED: ${cell.error}`, '', '']
      : [
          cell.cutMode,
          LABEL[cell.variant],
          String(cell.runs),
          formatNumber(cell.gapMs, 1),
          formatNumber(cell.maxGapMs, 1),
        ],
  );
  return markdownTable(['drop', 'client', 'drops', 'median ms to next chunk', 'max ms'], rows);
}

export function rendersTable(cells: RendersCell[]): string {
  const rows = cells.map((cell) =>
    cell.error === undefined
      ? [
          cell.path,
          cell.throttle,
          cell.pacing,
          String(cell.runs),
          formatNumber(cell.chunksPerSecond, 0),
          formatNumber(cell.rendersPerThousandChunks, 1),
          formatNumber(cell.commitsPerTurn ?? Number.NaN, 0),
          formatNumber(cell.commitsPerSecond ?? Number.NaN, 1),
          cell.commitsOverWindows === undefined
            ? 'n/a'
            : `${formatNumber(cell.commitsOverWindows.median, 0)} (worst ${formatNumber(cell.commitsOverWindows.max, 0)})`,
          formatNumber(cell.cpuUsPerChunk, 0),
          formatNumber(cell.addedLatency.medianMs, 1),
          formatNumber(cell.addedLatency.p95Ms, 1),
          formatNumber(cell.addedLatency.p99Ms, 1),
          formatNumber(cell.addedLatency.maxMs, 1),
        ]
      : [
          cell.path,
          cell.throttle,
          cell.pacing,
          '',
          '',
          `FAILED: ${cell.error}`,
          '',
          '',
          '',
          '',
          '',
          '',
          '',
          '',
        ],
  );
  return markdownTable(
    [
      'path',
      'throttle',
      'pacing',
      'runs',
      'chunks/s arriving',
      'renders per 1,000 chunks',
      'commits per turn',
      'commits/s',
      'commits over one per 40 ms',
      'CPU µs/chunk',
      'added ms median',
      'p95',
      'p99',
      'max',
    ],
    rows,
  );
}

export function scaleTable(cells: ScaleCell[]): string {
  const rows = cells.map((cell) =>
    cell.error !== undefined
      ? [LABEL[cell.variant], `FAILED: ${cell.error}`, '', '', '', '', '']
      : [
          LABEL[cell.variant],
          String(cell.sessions),
          formatNumber(cell.wallMs, 0),
          `${formatNumber(cell.cpuPercent, 1)}%`,
          formatNumber(cell.cpuUsPerChunk, 2),
          formatMiB(cell.peakRssBytes),
          `${formatNumber(cell.rssPerSessionBytes / 1024, 1)} KiB`,
          `${formatNumber(cell.serverCpuPercent, 1)}%`,
        ],
  );
  return markdownTable(
    [
      'client',
      'sessions',
      'wall ms',
      'client CPU (1 core)',
      'CPU µs/chunk',
      'peak RSS',
      'RSS per session',
      'server CPU',
    ],
    rows,
  );
}

export function longTurnTable(cells: LongTurnCell[]): string {
  const rows = cells.map((cell) => {
    const floor = cellOf(cells, () => true, 'floor');
    return cell.error !== undefined
      ? [LABEL[cell.variant], `FAILED: ${cell.error}`, '', '', '', '', '', '']
      : [
          LABEL[cell.variant],
          formatNumber(cell.deltas, 0),
          String(cell.runs),
          formatNumber(cell.wallMs, 0),
          formatNumber(cell.cpuUsPerChunk, 2),
          formatMiB(cell.turnRssBytes),
          formatNumber(ratio(cell.turnRssBytes, floor?.turnRssBytes ?? Number.NaN), 2),
          formatMiB(cell.retainedBytes),
        ];
  });
  return markdownTable(
    [
      'client',
      'text deltas',
      'runs',
      'wall ms',
      'CPU µs/chunk',
      'RSS growth during the turn',
      '÷ floor',
      'held at 90% of the turn (after a GC)',
    ],
    rows,
  );
}

export function bundleSizeTable(cells: BundleSizeCell[]): string {
  const ours = cells.find((cell) => cell.name.startsWith('durable-chat:'));
  return markdownTable(
    [
      'bundle (esbuild, minified ESM, browser, peers external)',
      'minified bytes',
      'gzip bytes',
      'gzip KB',
      '÷ durable-chat',
    ],
    cells.map((cell) =>
      cell.error !== undefined
        ? [cell.name, `FAILED: ${cell.error}`, '', '', '']
        : [
            cell.name,
            formatNumber(cell.minifiedBytes, 0),
            formatNumber(cell.gzipBytes, 0),
            formatNumber(cell.gzipBytes / 1024, 1),
            formatNumber(ratio(cell.gzipBytes, ours?.gzipBytes ?? Number.NaN), 2),
          ],
    ),
  );
}

export function renderReport(results: BenchResults): string {
  return [
    '### Throughput: 100,000 text-delta records, chunks read from the stream',
    throughputTable(results.throughput, 'chunks'),
    '### Through the AI SDK reducer (`readUIMessageStream`, as `useChat`)',
    throughputTable(results.throughput, 'reducer'),
    '### Time to first chunk (`send` → first text-delta)',
    firstChunkTable(results.firstChunk),
    `### Follow-up turns: \`send\` → first text-delta of turn 1 and turn 3 in one chat, ${
      results.followUp?.[0]?.delayMs ?? 50
    } ms added to every response (floor: (c″), reading while it appends)`,
    followUpTable(results.followUp ?? []),
    '### Resume after a dropped connection',
    resumeTable(results.resume),
    "### Renders: `useDurableChat`, and `useChat` over `useChatSession` (added latency: a delta's arrival → the first commit showing it)",
    rendersTable(results.renders),
    '### Scale: concurrent sessions in one process',
    scaleTable(results.scale),
    '### Long turn: RSS growth during one turn, chunks not kept by the reader',
    longTurnTable(results.longTurn ?? []),
    '### Bundle size: what an app ships for the client (1 KB = 1,024 bytes)',
    bundleSizeTable(results.bundleSize ?? []),
    '### Targets',
    targetsTable(targetChecks(results)),
  ].join('\n\n');
}
