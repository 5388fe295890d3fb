import type { OutRecord, StreamTail } from '../../protocol/types.js';

/** Builds a record once its `seq_num` and timestamp are known (the protocol's record builders). */
export type RecordFactory = (seqNum: number, timestamp: number) => OutRecord;

type Listener = () => void;

/** Where written records and trims go to be kept (a session's journal), if anywhere. */
export interface OutLogJournal {
  out(records: readonly OutRecord[]): void;
  trim(beforeSeq: number): void;
}

/**
 * A session's `.out` stream: records with session-wide `seq_num` from 0, trimmable from the
 * front. Records are kept as built (objects whose body is already a JSON string), so a
 * batch is serialised once per subscriber with no re-encoding of chunk data.
 *
 * Readers see a record only once it is published: at once in memory, or once a journal has
 * it on disk (`publish`), so no reader holds a `seq_num` a crash could hand to another
 * record. The run's own view (`readWritten`, `nextSeq`) includes unpublished records.
 */
export class OutLog {
  private records: OutRecord[] = [];
  /** `seq_num` of `records[0]`. */
  private firstSeq = 0;
  private lastTimestamp = 0;
  /** Records before this seq are visible to readers. */
  private publishedEnd = 0;
  private publishedTimestamp = 0;
  private journal: OutLogJournal | undefined;
  private readonly listeners = new Set<Listener>();

  /** Next `seq_num` to be written. */
  get nextSeq(): number {
    return this.firstSeq + this.records.length;
  }

  /** `seq_num` of the oldest record still stored. */
  get oldestSeq(): number {
    return this.firstSeq;
  }

  /** Timestamp of the newest record written (published or not). */
  get newestTimestamp(): number {
    return this.lastTimestamp;
  }

  get size(): number {
    return this.records.length;
  }

  /** The tail readers are told: the next published `seq_num`, as the stream store reports it. */
  tail(): StreamTail {
    return { seq_num: this.publishedEnd, timestamp: this.publishedTimestamp };
  }

  /** From now on records are published by `publish`, once `journal` has them on disk. */
  keepIn(journal: OutLogJournal): void {
    this.journal = journal;
  }

  /** Appends records in order; readers are woken once they are published. */
  append(factories: readonly RecordFactory[]): OutRecord[] {
    if (factories.length === 0) return [];
    // Timestamps are monotonic even if the wall clock steps back.
    const timestamp = Math.max(Date.now(), this.lastTimestamp);
    const written: OutRecord[] = [];
    for (const factory of factories) {
      const record = factory(this.nextSeq, timestamp);
      this.records.push(record);
      written.push(record);
    }
    this.lastTimestamp = timestamp;
    if (this.journal === undefined) this.publish(this.nextSeq);
    else this.journal.out(written);
    return written;
  }

  /** Makes records before `endSeq` visible to readers and wakes every reader once. */
  publish(endSeq: number): void {
    const end = Math.min(endSeq, this.nextSeq);
    if (end <= this.publishedEnd) return;
    this.publishedEnd = end;
    this.publishedTimestamp = this.records[end - 1 - this.firstSeq]?.timestamp ?? this.lastTimestamp;
    for (const listener of this.listeners) listener();
  }

  /**
   * Published records from `fromSeq` on, at most `max`. A cursor that was trimmed away clamps
   * forward to the first surviving record, as the spec requires.
   */
  read(fromSeq: number, max = Number.POSITIVE_INFINITY): OutRecord[] {
    const start = Math.max(fromSeq, this.firstSeq) - this.firstSeq;
    const end = Math.min(this.publishedEnd - this.firstSeq, start + max);
    return start >= end ? [] : this.records.slice(start, end);
  }

  /** Every record from `fromSeq` on, published or not: what the session's runs wrote. */
  readWritten(fromSeq: number): OutRecord[] {
    return this.records.slice(Math.max(fromSeq, this.firstSeq) - this.firstSeq);
  }

  /** The newest published record (optionally skipping trailing records that match `skip`). */
  last(skip?: (record: OutRecord) => boolean): OutRecord | undefined {
    for (let index = this.publishedEnd - this.firstSeq - 1; index >= 0; index--) {
      const record = this.records[index];
      if (record !== undefined && !(skip?.(record) ?? false)) return record;
    }
    return undefined;
  }

  /** Drops every record before `beforeSeq`; their memory is released. */
  trim(beforeSeq: number): number {
    const count = Math.min(Math.max(0, beforeSeq - this.firstSeq), this.records.length);
    if (count === 0) return 0;
    this.records = this.records.slice(count);
    this.firstSeq += count;
    this.journal?.trim(this.firstSeq);
    return count;
  }

  /** Loads what a journal kept (before any reader or run uses the log): all of it published. */
  restore(firstSeq: number, records: OutRecord[], lastTimestamp: number): void {
    this.firstSeq = firstSeq;
    this.records = records;
    this.lastTimestamp = lastTimestamp;
    this.publishedEnd = this.nextSeq;
    this.publishedTimestamp = lastTimestamp;
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
