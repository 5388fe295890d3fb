import { useEffect, useRef } from 'react';
import type { TimelineEntry } from '../timeline-text.js';
import { palette } from './palette.js';

function clock(at: number): string {
  const date = new Date(at);
  const pad = (value: number, size = 2) => String(value).padStart(size, '0');
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}

/** A chat's timeline, newest last, kept scrolled to the end while the reader is there. */
export function Timeline({ entries }: { entries: readonly TimelineEntry[] }) {
  const list = useRef<HTMLOListElement>(null);
  const pinned = useRef(true);
  // biome-ignore lint/correctness/useExhaustiveDependencies: scrolls when the entries change.
  useEffect(() => {
    const element = list.current;
    if (element !== null && pinned.current) element.scrollTop = element.scrollHeight;
  }, [entries]);
  return (
    <ol
      ref={list}
      aria-label="timeline"
      data-testid="durable-chat-devtools-timeline"
      onScroll={(event) => {
        const element = event.currentTarget;
        pinned.current = element.scrollTop + element.clientHeight >= element.scrollHeight - 4;
      }}
      style={{ listStyle: 'none', margin: 0, padding: 0, flex: 1, minWidth: 0, overflowY: 'auto' }}
    >
      {entries.map((entry, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: lines are append-only between clears.
        <li key={index} data-kind={entry.kind} style={{ display: 'flex', gap: 8, padding: '1px 0' }}>
          <span style={{ color: palette.muted, flex: 'none' }}>{clock(entry.at)}</span>
          <span style={{ color: palette.kinds[entry.kind] }}>{entry.text}</span>
        </li>
      ))}
    </ol>
  );
}
