import { RECORD_HEADER } from '../../protocol/headers.js';
import {
  batchEventId,
  encodeBatchEvent,
  encodeDoneEvent,
  encodeErrorEvent,
  encodePingEvent,
} from '../../protocol/sse-encoder.js';
import type { OutRecord } from '../../protocol/types.js';
import type { OutConnectionPlan } from '../faults.js';
import type { Session } from '../store/session.js';
import type { SseSink } from './sse-sink.js';

export interface OutConnectionOptions {
  /** First `seq_num` to send (clamped forward past trimmed records). */
  from: number;
  /** `[DONE]` after this long with nothing sent. */
  timeoutMs: number;
  pingIntervalMs: number;
  /** Peek mode found the stream settled: drain, then close after `peekCloseMs`. */
  settled: boolean;
  peekCloseMs: number;
  maxBatchRecords: number;
  plan: OutConnectionPlan;
  /** Read per write, so the fault can be switched on a live stream. */
  pieceBytes: () => number | null;
  onError: (error: unknown) => void;
  /** Every open connection, so disposing the server can end them. */
  registry: Set<{ end(): void }>;
  /** Removes the refreshed `public-access-token` of control records (a read-only reader). */
  withoutTokens?: boolean;
}

/** The record without its `public-access-token` header (the only header that grants more). */
function withoutToken(record: OutRecord): OutRecord {
  const headers = record.headers;
  if (
    headers === undefined ||
    !headers.some(([name]) => name.toLowerCase() === RECORD_HEADER.publicAccessToken)
  )
    return record;
  return {
    ...record,
    headers: headers.filter(([name]) => name.toLowerCase() !== RECORD_HEADER.publicAccessToken),
  };
}

/**
 * One `.out` subscriber. Wakes on appends, coalesces what arrived into one `batch` event
 * (so a fast producer yields large batches), pings while idle and ends with `[DONE]` after
 * the long-poll timeout. Writes are serialised: while one is in flight, new records pile up
 * for the next batch.
 */
export class OutConnection {
  private cursor: number;
  private sent = 0;
  private writing = false;
  private finished = false;
  /** Fault: silent with the socket open; only the client or the server's end closes it. */
  private stalled = false;
  private duplicatesPending: number;
  private pingTimer: NodeJS.Timeout | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly session: Session,
    private readonly sink: SseSink,
    private readonly options: OutConnectionOptions,
  ) {
    this.cursor = options.from;
    this.duplicatesPending = options.plan.duplicateRecords ?? 0;
    this.unsubscribe = session.out.subscribe(() => this.schedule());
    sink.onClose(() => this.cleanup());
    options.registry.add(this);
    session.streams.add(this);
  }

  /** Ends the stream now with `[DONE]` (the server is shutting down); a stalled one is cut. */
  end(): void {
    if (this.stalled) {
      this.cleanup();
      this.sink.destroy();
      return;
    }
    void this.done();
  }

  start(): void {
    this.armTimers();
    if (this.options.plan.error?.afterRecords === 0) {
      void this.fail();
      return;
    }
    if (this.options.plan.stallAfterRecords === 0) {
      this.stall();
      return;
    }
    this.schedule();
    if (this.options.settled) {
      const timer = setTimeout(() => void this.done(), this.options.peekCloseMs);
      timer.unref();
      this.deadlineTimer = timer;
    }
  }

  private armTimers(): void {
    if (this.finished) return;
    clearInterval(this.pingTimer);
    this.pingTimer = setInterval(() => void this.ping(), this.options.pingIntervalMs);
    this.pingTimer.unref();
    if (this.options.settled) return;
    clearTimeout(this.deadlineTimer);
    this.deadlineTimer = setTimeout(() => void this.done(), this.options.timeoutMs);
    this.deadlineTimer.unref();
  }

  private schedule(): void {
    if (this.writing || this.finished) return;
    this.writing = true;
    setImmediate(() => {
      this.pump().catch((error: unknown) => {
        // A failed write means the socket is gone; cut it so the reader resumes from its cursor.
        this.options.onError(error);
        this.finish();
        this.sink.destroy();
      });
    });
  }

  /** Sends batches until caught up; runs one at a time. */
  private async pump(): Promise<void> {
    try {
      while (!this.finished) {
        const records = this.nextRecords();
        if (records.length === 0) break;
        await this.sendBatch(records);
      }
    } finally {
      this.writing = false;
    }
  }

  private nextRecords(): OutRecord[] {
    const out = this.session.out;
    let records = out.read(this.cursor, this.options.maxBatchRecords);
    if (records.length > 0 && this.duplicatesPending > 0) {
      const first = records[0]?.seq_num ?? this.cursor;
      const from = Math.max(out.oldestSeq, first - this.duplicatesPending);
      const again = out.read(from, first - from);
      this.duplicatesPending = 0;
      records = [...again, ...records];
    }
    return records;
  }

  private async sendBatch(records: OutRecord[]): Promise<void> {
    const plan = this.options.plan;
    let batch = records;
    let cut: 'drop' | 'error' | 'stall' | undefined;
    const limit = plan.dropAfterRecords ?? plan.error?.afterRecords ?? plan.stallAfterRecords;
    if (limit !== undefined && this.sent + batch.length >= limit) {
      batch = batch.slice(0, Math.max(0, limit - this.sent));
      if (plan.dropAfterRecords !== undefined) cut = 'drop';
      else cut = plan.error !== undefined ? 'error' : 'stall';
    }
    const last = batch[batch.length - 1];
    if (last !== undefined) {
      const tail = this.session.out.tail();
      const frame = encodeBatchEvent(
        { records: this.options.withoutTokens === true ? batch.map(withoutToken) : batch, tail },
        batchEventId(last.seq_num, last.timestamp, batch.length),
      );
      await this.write(frame);
      this.sent += batch.length;
      this.cursor = Math.max(this.cursor, last.seq_num + 1);
      this.armTimers();
    }
    if (cut === 'drop') await this.drop(records.slice(batch.length));
    else if (cut === 'error') await this.fail();
    else if (cut === 'stall') this.stall();
  }

  /** Stops every write (records, pings, `[DONE]`) but keeps the socket, as a dead peer would. */
  private stall(): void {
    this.stalled = true;
    this.finished = true;
    clearInterval(this.pingTimer);
    clearTimeout(this.deadlineTimer);
    this.unsubscribe();
  }

  private async write(frame: string): Promise<void> {
    const piece = this.options.pieceBytes();
    if (piece === null || piece <= 0) return this.sink.write(frame);
    const bytes = Buffer.from(frame);
    for (let offset = 0; offset < bytes.length && !this.sink.closed; offset += piece) {
      await this.sink.write(bytes.subarray(offset, offset + piece));
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** Cuts the connection; with `midFrame`, after half of the next frame. */
  private async drop(rest: OutRecord[]): Promise<void> {
    const next = rest[0];
    if (this.options.plan.midFrame === true && next !== undefined) {
      const frame = encodeBatchEvent({ records: [next], tail: this.session.out.tail() });
      await this.sink.write(frame.slice(0, Math.floor(frame.length / 2)));
    }
    this.finish();
    this.sink.destroy();
  }

  private async fail(): Promise<void> {
    await this.sink.write(encodeErrorEvent(this.options.plan.error?.message ?? 'stream error'));
    this.finish();
    this.sink.destroy();
  }

  private async ping(): Promise<void> {
    if (this.finished || this.writing) return;
    await this.sink.write(encodePingEvent({ timestamp: Date.now(), tail: this.session.out.tail() }));
  }

  private async done(): Promise<void> {
    if (this.finished) return;
    // Records that arrived just now still go out before the end.
    while (this.writing) await new Promise((resolve) => setImmediate(resolve));
    const records = this.nextRecords();
    if (records.length > 0) await this.sendBatch(records);
    if (this.finished) return;
    this.finish();
    await this.sink.write(encodeDoneEvent());
    this.sink.end();
  }

  private finish(): void {
    this.finished = true;
    this.cleanup();
  }

  private cleanup(): void {
    this.finished = true;
    this.options.registry.delete(this);
    this.session.streams.delete(this);
    clearInterval(this.pingTimer);
    clearTimeout(this.deadlineTimer);
    this.unsubscribe();
  }
}
