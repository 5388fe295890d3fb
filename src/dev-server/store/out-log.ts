import type { OutRecord, StreamTail } from '../../protocol/types.js';

/** Builds a record once its `seq_num` and timestamp are known (the protocol's record builders). */
export type RecordFactory = (seqNum: number, timestamp: number) => OutRecord;

type Listener = () => void;

/**
 * A session's `.out` stream: records with session-wide `seq_num` from 0, trimmable from the
 * front. Records are kept as built (objects whose body is already a JSON string), so a
 * batch is serialised once per subscriber with no re-encoding of chunk data.
 */
export class OutLog {
  private records: OutRecord[] = [];
  /** `seq_num` of `records[0]`. */
  private firstSeq = 0;
  private lastTimestamp = 0;
  private readonly listeners = new Set<Listener>();

  /** Next `seq_num` to be written: the tail, as the stream store reports it. */
  get nextSeq(): number {
    return this.firstSeq + this.records.length;
  }

  /** `seq_num` of the oldest record still stored. */
  get oldestSeq(): number {
    return this.firstSeq;
  }

  get size(): number {
    return this.records.length;
  }

  tail(): StreamTail {
    return { seq_num: this.nextSeq, timestamp: this.lastTimestamp };
  }

  /** Appends records in order and wakes every reader once. Returns the written records. */
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
    for (const listener of this.listeners) listener();
    return written;
  }

  /**
   * Records from `fromSeq` on, at most `max`. A cursor that was trimmed away clamps forward
   * to the first surviving record, as the spec requires.
   */
  read(fromSeq: number, max = Number.POSITIVE_INFINITY): OutRecord[] {
    const start = Math.max(fromSeq, this.firstSeq) - this.firstSeq;
    if (start >= this.records.length) return [];
    return this.records.slice(start, Math.min(this.records.length, start + max));
  }

  /** The newest record (optionally skipping trailing records that match `skip`). */
  last(skip?: (record: OutRecord) => boolean): OutRecord | undefined {
    for (let index = this.records.length - 1; index >= 0; index--) {
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
    return count;
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
