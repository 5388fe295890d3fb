import type { ChatInputChunk } from '../../protocol/types.js';

export interface InRecord {
  seq: number;
  timestamp: number;
  chunk: ChatInputChunk;
  partId: string;
  /** A stop that already aborted a turn: it must not abort the next one too. */
  spent?: boolean;
}

/** Where appended records and spent stops go to be kept (a session's journal), if anywhere. */
export interface InLogJournal {
  in(record: InRecord): void;
  spent(seq: number): void;
}

/** Part ids remembered per session for idempotency; older ones are forgotten first. */
const MAX_REMEMBERED_PART_IDS = 1024;

/**
 * A session's `.in` channel: one record per append with a session-wide `seq` from 0.
 * Records the agent acknowledged (a turn-complete carried their seq) are released; the
 * rest stay so a continuation run can replay what a dead run never answered.
 */
export class InLog {
  private records: InRecord[] = [];
  private nextSeqValue = 0;
  private readonly partIds = new Map<string, number>();
  private readonly listeners = new Set<(record: InRecord) => void>();
  private journal: InLogJournal | undefined;

  get nextSeq(): number {
    return this.nextSeqValue;
  }

  get size(): number {
    return this.records.length;
  }

  /** The seq a part id was stored under, if it was. */
  seqOfPart(partId: string): number | undefined {
    return this.partIds.get(partId);
  }

  /** Records appended from now on, and stops spent, are handed to `journal` too. */
  keepIn(journal: InLogJournal): void {
    this.journal = journal;
  }

  append(chunk: ChatInputChunk, partId: string): InRecord {
    const record: InRecord = { seq: this.nextSeqValue++, timestamp: Date.now(), chunk, partId };
    this.records.push(record);
    this.remember(partId, record.seq);
    // Kept before any listener runs: whatever the run writes in answer lands after it.
    this.journal?.in(record);
    for (const listener of this.listeners) listener(record);
    return record;
  }

  private remember(partId: string, seq: number): void {
    this.partIds.set(partId, seq);
    if (this.partIds.size > MAX_REMEMBERED_PART_IDS) {
      const oldest = this.partIds.keys().next();
      if (oldest.done !== true) this.partIds.delete(oldest.value);
    }
  }

  /** A stop aborted a turn: it must not abort the next one too. */
  spend(record: InRecord): void {
    record.spent = true;
    this.journal?.spent(record.seq);
  }

  /** Part ids remembered for idempotency, oldest first. */
  rememberedParts(): [string, number][] {
    return [...this.partIds];
  }

  /**
   * Loads what a journal kept, before any run uses the log: the held records (released ones
   * are not passed), the next seq, and the part ids to remember (oldest first).
   */
  restore(records: InRecord[], nextSeq: number, parts: Iterable<[string, number]>): void {
    this.records = records;
    this.nextSeqValue = nextSeq;
    this.partIds.clear();
    for (const [partId, seq] of parts) this.remember(partId, seq);
  }

  /** Records with `seq >= fromSeq` still held. */
  from(fromSeq: number): InRecord[] {
    return this.records.filter((record) => record.seq >= fromSeq);
  }

  /** Releases records up to and including `seq`. */
  release(seq: number): void {
    let count = 0;
    while (count < this.records.length && (this.records[count]?.seq ?? Number.POSITIVE_INFINITY) <= seq)
      count++;
    if (count > 0) this.records = this.records.slice(count);
  }

  subscribe(listener: (record: InRecord) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
