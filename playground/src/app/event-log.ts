import { useCallback, useMemo, useRef, useState } from 'react';

export interface LogEntry {
  id: number;
  /** ms since the page started loading (`performance.now()`). */
  at: number;
  kind: string;
  detail: string;
}

/**
 * Timings of the latest turn as the page saw them. `.out` records are counted from the
 * session's cursor (`lastEventId`), which moves once per record: one record is one chunk.
 */
export interface TurnMeter {
  /** When the visitor sent (performance.now()). */
  sentAt: number | undefined;
  /** The cursor just before the turn. */
  baseSeq: number | undefined;
  firstChunkAt: number | undefined;
  /** First render showing the reply's text: the first token a reader sees. */
  firstTextAt: number | undefined;
  lastChunkAt: number | undefined;
  chunks: number;
}

const MAX_ENTRIES = 200;
const emptyMeter: TurnMeter = {
  sentAt: undefined,
  baseSeq: undefined,
  firstChunkAt: undefined,
  firstTextAt: undefined,
  lastChunkAt: undefined,
  chunks: 0,
};

function since(meter: TurnMeter, at: number | undefined): number | undefined {
  return meter.sentAt === undefined || at === undefined ? undefined : at - meter.sentAt;
}

export const timeToFirstChunk = (meter: TurnMeter) => since(meter, meter.firstChunkAt);
export const timeToFirstToken = (meter: TurnMeter) => since(meter, meter.firstTextAt);

/** Record rate between the first and the latest record of the turn. */
export function chunksPerSecond(meter: TurnMeter): number | undefined {
  if (meter.firstChunkAt === undefined || meter.lastChunkAt === undefined || meter.chunks < 2)
    return undefined;
  const seconds = (meter.lastChunkAt - meter.firstChunkAt) / 1000;
  return seconds > 0 ? (meter.chunks - 1) / seconds : undefined;
}

/** The event log and the meter of the latest turn. */
export function useEventLog() {
  const [entries, setEntries] = useState<LogEntry[]>([]);
  const [meter, setMeter] = useState<TurnMeter>(emptyMeter);
  const nextId = useRef(0);

  const log = useCallback((kind: string, detail = '') => {
    const entry = { id: nextId.current++, at: performance.now(), kind, detail };
    setEntries((current) => [entry, ...current].slice(0, MAX_ENTRIES));
  }, []);

  const turnStarted = useCallback((baseSeq: number | undefined) => {
    setMeter({ ...emptyMeter, sentAt: performance.now(), baseSeq: baseSeq ?? -1 });
  }, []);

  const recordsSeen = useCallback((lastEventId: number | undefined) => {
    if (lastEventId === undefined) return;
    const now = performance.now();
    setMeter((current) => {
      if (current.baseSeq === undefined || lastEventId <= current.baseSeq) return current;
      return {
        ...current,
        firstChunkAt: current.firstChunkAt ?? now,
        lastChunkAt: now,
        chunks: lastEventId - current.baseSeq,
      };
    });
  }, []);

  const textShown = useCallback(() => {
    const now = performance.now();
    setMeter((current) =>
      current.sentAt === undefined || current.firstTextAt !== undefined
        ? current
        : { ...current, firstTextAt: now },
    );
  }, []);

  const clear = useCallback(() => setEntries([]), []);

  return useMemo(
    () => ({ entries, meter, log, turnStarted, recordsSeen, textShown, clear }),
    [entries, meter, log, turnStarted, recordsSeen, textShown, clear],
  );
}

export type EventLogApi = ReturnType<typeof useEventLog>;
