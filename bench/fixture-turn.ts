import { batchEventId, dataRecord, encodeBatchEvent, type OutRecord, turnCompleteRecord } from 'durable-chat';

/**
 * One assistant turn of `deltas` text-delta records, the same bytes for every client.
 * Built deterministically from a seed so the server (which streams it) and the bench
 * (which checks each client's reply) agree without sharing memory.
 */
export interface TurnSpec {
  /** Turn name; chat ids start with `${name}--` so the server knows what to stream. */
  name: string;
  deltas: number;
  /** Records per SSE `batch` event (100 for a catch-up read, 1 for the live shape). */
  batchSize: number;
  /**
   * The `tail` each batch reports. `live` (default): the batch's last record + 1, as when
   * the agent writes while the client reads (every batch reaches the live edge). `end`:
   * the turn's end, as when a reader catches up on a turn already written (a backlog).
   */
  tail?: 'live' | 'end';
  seed?: number;
  /**
   * Which turn of its chat this is (1-based, default 1): turn `n` has its own text (another
   * seed), its records follow turn `n - 1`'s on `.out`, and its turn-complete answers the
   * chat's `n`-th append. Build it with {@link followUpTurn}.
   */
  turnIndex?: number;
}

export interface Turn {
  spec: TurnSpec;
  records: OutRecord[];
  /** The reply's full text: what every client must reassemble exactly. */
  text: string;
  /** Number of UI message chunks a client should emit (everything but the turn-complete). */
  chunkCount: number;
  /** `seq_num` of the turn-complete record. */
  lastSeq: number;
}

export const TEXT_PART_ID = 'txt-0';
/** The `.in` seq the fixture server answers the first append of a session with. */
export const FIRST_APPEND_SEQ = 1;
const TIMESTAMP = 1_767_225_600_000;

// Mostly ASCII words, with escapes and multibyte characters so JSON and UTF-8 decoding
// are exercised the way a real model's output would.
const PIECES = ['lorem ', 'ipsum ', 'dolor ', 'sit ', 'amet, ', 'a "quote" ', 'back\\slash ', 'line\n'];
const RARE = ['café ', '日本語 ', 'emoji 🚀 ', 'ß ', 'naïve '];

function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** About 8 characters per delta, like a model's token stream. */
export function buildDeltas(count: number, seed: number): string[] {
  const random = mulberry32(seed);
  const deltas: string[] = [];
  let carry = '';
  while (deltas.length < count) {
    if (carry.length < 8) {
      const list = random() < 0.05 ? RARE : PIECES;
      carry += list[Math.floor(random() * list.length)] ?? '';
      continue;
    }
    const take = 6 + Math.floor(random() * 5);
    const chars = Array.from(carry);
    deltas.push(chars.slice(0, take).join(''));
    carry = chars.slice(take).join('');
  }
  return deltas;
}

function partId(random: () => number): string {
  // A fresh random id per record, as production sends (wire notes); never the cursor.
  return `p${Math.floor(random() * 2 ** 48).toString(36)}${Math.floor(random() * 2 ** 48).toString(36)}`;
}

/** What a client must deliver for a turn: its text and chunk count (no records built). */
export interface ExpectedReply {
  text: string;
  chunkCount: number;
  deltas: number;
}

/** Chunks around the deltas: start, start-step, text-start, text-end, finish-step, finish. */
const FRAME_CHUNKS = 6;

/** Records of one turn on `.out`: its chunks and the turn-complete. */
const recordsPerTurn = (spec: TurnSpec) => spec.deltas + FRAME_CHUNKS + 1;

/** Turn `index` (1-based) of a chat whose every turn is `spec`'s shape (see `turnIndex`). */
export function followUpTurn(spec: TurnSpec, index: number): TurnSpec {
  return { ...spec, turnIndex: index };
}

function seedOf(spec: TurnSpec): number {
  // Turn 1 keeps the spec's seed, so a single-turn chat is byte for byte what it always was.
  return (spec.seed ?? 42) + 7_919 * ((spec.turnIndex ?? 1) - 1);
}

export function expectedReply(spec: TurnSpec): ExpectedReply {
  const text = buildDeltas(spec.deltas, seedOf(spec)).join('');
  return { text, chunkCount: spec.deltas + FRAME_CHUNKS, deltas: spec.deltas };
}

export function buildTurn(spec: TurnSpec): Turn {
  const seed = seedOf(spec);
  const index = spec.turnIndex ?? 1;
  const firstSeq = (index - 1) * recordsPerTurn(spec);
  const deltas = buildDeltas(spec.deltas, seed);
  const random = mulberry32(seed ^ 0x9e3779b9);
  const chunks: unknown[] = [
    { type: 'start', messageId: index === 1 ? `msg-${spec.name}` : `msg-${spec.name}-${index}` },
    { type: 'start-step' },
    { type: 'text-start', id: TEXT_PART_ID },
    ...deltas.map((delta) => ({ type: 'text-delta', id: TEXT_PART_ID, delta })),
    { type: 'text-end', id: TEXT_PART_ID },
    { type: 'finish-step' },
    { type: 'finish' },
  ];
  const records = chunks.map((chunk, at) =>
    dataRecord(firstSeq + at, TIMESTAMP + firstSeq + at, chunk, partId(random)),
  );
  const lastSeq = firstSeq + records.length;
  records.push(
    turnCompleteRecord(lastSeq, TIMESTAMP + lastSeq, { sessionInEventId: FIRST_APPEND_SEQ + index - 1 }),
  );
  return { spec, records, text: deltas.join(''), chunkCount: chunks.length, lastSeq };
}

/**
 * One SSE `batch` event for `records` (a slice of the turn), with the store's id triple.
 * `tailSeq` undefined: the live edge right after this batch.
 */
export function encodeRecords(records: OutRecord[], tailSeq?: number): string {
  const last = records[records.length - 1];
  const lastSeq = last?.seq_num ?? 0;
  const timestamp = last?.timestamp ?? TIMESTAMP;
  return encodeBatchEvent(
    { records, tail: { seq_num: tailSeq ?? lastSeq + 1, timestamp } },
    batchEventId(lastSeq, timestamp, records.length),
  );
}

/** Chat ids carry the turn name so the fixture server needs no session setup call. */
export function chatIdFor(turnName: string, unique: string): string {
  return `${turnName}--${unique}`;
}

export function turnNameOf(chatId: string): string {
  const index = chatId.indexOf('--');
  return index === -1 ? chatId : chatId.slice(0, index);
}
