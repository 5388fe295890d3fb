import { buildTurn, encodeRecords, type Turn, type TurnSpec } from './fixture-turn.js';

interface EncodedEvent {
  firstSeq: number;
  lastSeq: number;
  bytes: Buffer;
}

export interface TurnPiece {
  lastSeq: number;
  bytes: Buffer;
}

export interface EncodedTurn {
  spec: TurnSpec;
  turn: Turn;
  /**
   * The turn's SSE bytes after `cursor`, grouped into pieces of at least `groupBytes`
   * (0: one event per piece, for paced streams).
   */
  piecesFrom(cursor: number, groupBytes: number): Iterable<TurnPiece>;
  /** Records with `after < seq_num <= upTo`, encoded in the turn's batch size. */
  slice(after: number, upTo: number): Buffer;
}

/** Encodes a turn once, so serving it is a memory copy. */
export function encodeTurn<SPEC extends TurnSpec>(spec: SPEC): EncodedTurn & { spec: SPEC } {
  const turn = buildTurn(spec);
  const tailSeq = spec.tail === 'end' ? turn.lastSeq + 1 : undefined;
  const encodeRange = (after: number, upTo: number): Buffer => {
    const parts: string[] = [];
    const records = turn.records.filter((record) => record.seq_num > after && record.seq_num <= upTo);
    for (let index = 0; index < records.length; index += spec.batchSize) {
      parts.push(encodeRecords(records.slice(index, index + spec.batchSize), tailSeq));
    }
    return Buffer.from(parts.join(''), 'utf8');
  };
  const events: EncodedEvent[] = [];
  for (let index = 0; index < turn.records.length; index += spec.batchSize) {
    const batch = turn.records.slice(index, index + spec.batchSize);
    const firstSeq = batch[0]?.seq_num ?? 0;
    const lastSeq = batch[batch.length - 1]?.seq_num ?? 0;
    events.push({ firstSeq, lastSeq, bytes: Buffer.from(encodeRecords(batch, tailSeq), 'utf8') });
  }

  function* piecesFrom(cursor: number, groupBytes: number): Iterable<TurnPiece> {
    let start = events.findIndex((event) => event.lastSeq > cursor);
    if (start === -1) return;
    const first = events[start];
    if (first !== undefined && first.firstSeq <= cursor) {
      // A resume inside a batch: re-encode the rest of that batch only.
      yield { lastSeq: first.lastSeq, bytes: encodeRange(cursor, first.lastSeq) };
      start++;
    }
    let group: Buffer[] = [];
    let size = 0;
    for (let index = start; index < events.length; index++) {
      const event = events[index];
      if (event === undefined) continue;
      group.push(event.bytes);
      size += event.bytes.length;
      if (size >= groupBytes) {
        yield { lastSeq: event.lastSeq, bytes: group.length === 1 ? event.bytes : Buffer.concat(group) };
        group = [];
        size = 0;
      }
    }
    const last = events[events.length - 1];
    if (group.length > 0 && last !== undefined) yield { lastSeq: last.lastSeq, bytes: Buffer.concat(group) };
  }

  return { spec, turn, piecesFrom, slice: encodeRange };
}
