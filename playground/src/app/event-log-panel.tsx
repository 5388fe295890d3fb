import { chunksPerSecond, type EventLogApi, timeToFirstChunk, timeToFirstToken } from './event-log.js';

function formatMs(value: number | undefined): string {
  return value === undefined ? '–' : `${Math.round(value)} ms`;
}

/** Timings of the latest turn, then the event log, newest first. */
export function EventLogPanel({ log }: { log: EventLogApi }) {
  const rate = chunksPerSecond(log.meter);
  return (
    <section className="panel" aria-label="Event log">
      <h2>Timings</h2>
      <dl className="metrics">
        <dt>first chunk</dt>
        <dd data-testid="metric-ttfc">{formatMs(timeToFirstChunk(log.meter))}</dd>
        <dt>first token</dt>
        <dd data-testid="metric-ttft" data-at={log.meter.firstTextAt}>
          {formatMs(timeToFirstToken(log.meter))}
        </dd>
        <dt>chunks</dt>
        <dd data-testid="metric-chunks">{log.meter.chunks}</dd>
        <dt>chunks/s</dt>
        <dd data-testid="metric-rate">{rate === undefined ? '–' : rate.toFixed(1)}</dd>
      </dl>
      <h2>
        Events{' '}
        <button type="button" className="link" onClick={log.clear}>
          clear
        </button>
      </h2>
      <ol className="event-log" data-testid="event-log">
        {log.entries.map((entry) => (
          <li key={entry.id} data-kind={entry.kind}>
            <time>{(entry.at / 1000).toFixed(2)}s</time> <strong>{entry.kind}</strong> {entry.detail}
          </li>
        ))}
      </ol>
    </section>
  );
}
