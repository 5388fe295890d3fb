import type { UIMessage, UIMessageChunk } from 'ai';
import { DurableChatError } from 'durable-chat';
import type { ExpectedReply } from './fixture-turn.js';

/** Collects what a client delivered, cheaply enough not to distort the timing. */
export interface ChunkCollector {
  count: number;
  /** Chunks other than text deltas (which a client may merge: see `coalesceDeltas`). */
  frames: number;
  deltas: string[];
  firstType: string | undefined;
  lastType: string | undefined;
  add(chunk: UIMessageChunk): void;
}

export function createCollector(): ChunkCollector {
  const collector: ChunkCollector = {
    count: 0,
    frames: 0,
    deltas: [],
    firstType: undefined,
    lastType: undefined,
    add(chunk) {
      collector.count++;
      collector.firstType ??= chunk.type;
      collector.lastType = chunk.type;
      if (chunk.type === 'text-delta') collector.deltas.push(chunk.delta);
      else collector.frames++;
    },
  };
  return collector;
}

/**
 * A checker that keeps nothing per chunk: the count, the first and last type, and a running
 * hash and length of the text, for a turn too long to hold (the long-turn memory scenario,
 * where a collector's own memory would hide the client's).
 */
export interface HashingCollector {
  count: number;
  /** Chunks other than text deltas (which a client may merge: see `coalesceDeltas`). */
  frames: number;
  firstType: string | undefined;
  lastType: string | undefined;
  textLength: number;
  textHash: number;
  add(chunk: UIMessageChunk): void;
}

/** FNV-1a over UTF-16 code units, continued from `hash`. */
export function hashText(hash: number, text: string): number {
  let state = hash;
  for (let index = 0; index < text.length; index++)
    state = Math.imul(state ^ text.charCodeAt(index), 0x01000193);
  return state;
}

export const TEXT_HASH_SEED = 0x811c9dc5 | 0;

/** The expected text's hash and length, computed once without keeping the text. */
export function expectedTextHash(text: string): { textLength: number; textHash: number } {
  return { textLength: text.length, textHash: hashText(TEXT_HASH_SEED, text) };
}

export function createHashingCollector(): HashingCollector {
  const collector: HashingCollector = {
    count: 0,
    frames: 0,
    firstType: undefined,
    lastType: undefined,
    textLength: 0,
    textHash: TEXT_HASH_SEED,
    add(chunk) {
      collector.count++;
      collector.firstType ??= chunk.type;
      collector.lastType = chunk.type;
      if (chunk.type === 'text-delta') {
        collector.textLength += chunk.delta.length;
        collector.textHash = hashText(collector.textHash, chunk.delta);
      } else collector.frames++;
    },
  };
  return collector;
}

/**
 * Throws unless the hashed reply has the turn's chunks and text (by hash and length). Text
 * deltas may arrive merged (the hash runs over the text, not the deltas); every other chunk
 * exactly once.
 */
export function verifyHashed(
  label: string,
  turn: { chunkCount: number; deltas: number; textLength: number; textHash: number },
  collector: HashingCollector,
): void {
  verifyShape(label, turn, collector);
  if (collector.textLength !== turn.textLength || collector.textHash !== turn.textHash) {
    throw mismatch(
      label,
      `text of ${collector.textLength} chars (hash ${collector.textHash}), expected ${turn.textLength} (hash ${turn.textHash})`,
    );
  }
}

export async function drain(
  stream: ReadableStream<UIMessageChunk>,
  sink: { add(chunk: UIMessageChunk): void },
): Promise<void> {
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    sink.add(value);
  }
}

/** Every chunk but the text deltas exactly once, start to finish; deltas may come merged. */
function verifyShape(
  label: string,
  turn: { chunkCount: number; deltas: number },
  collector: { count: number; frames: number; firstType: string | undefined; lastType: string | undefined },
): void {
  const frames = turn.chunkCount - turn.deltas;
  if (collector.frames !== frames || collector.count > turn.chunkCount) {
    throw mismatch(
      label,
      `${collector.count} chunks (${collector.frames} not text deltas), expected ${turn.chunkCount} (${frames})`,
    );
  }
  if (collector.firstType !== 'start' || collector.lastType !== 'finish') {
    throw mismatch(
      label,
      `chunks run ${collector.firstType} .. ${collector.lastType}, expected start .. finish`,
    );
  }
}

function mismatch(label: string, detail: string): DurableChatError {
  return new DurableChatError({
    code: 'UNEXPECTED_RESPONSE',
    message: `fixture check failed (${label}): ${detail}`,
  });
}

function firstDifference(actual: string, expected: string): number {
  const length = Math.min(actual.length, expected.length);
  for (let index = 0; index < length; index++) if (actual[index] !== expected[index]) return index;
  return length;
}

/**
 * Throws unless the client delivered exactly the turn's chunks and text. Text deltas may
 * arrive merged (fewer, longer deltas with the same text); every other chunk exactly once.
 */
export function verifyChunks(label: string, turn: ExpectedReply, collector: ChunkCollector): void {
  verifyShape(label, turn, collector);
  verifyText(label, turn, collector.deltas.join(''));
}

export function verifyText(label: string, turn: ExpectedReply, text: string): void {
  if (text !== turn.text) {
    const at = firstDifference(text, turn.text);
    throw mismatch(
      label,
      `text of ${text.length} chars, expected ${turn.text.length}; first difference at ${at}`,
    );
  }
}

/** Throws unless the AI SDK reducer built one assistant message with exactly the turn's text. */
export function verifyMessage(label: string, turn: ExpectedReply, message: UIMessage | undefined): void {
  if (message === undefined) throw mismatch(label, 'the reducer produced no message');
  const texts = message.parts.filter((part) => part.type === 'text');
  if (texts.length !== 1) throw mismatch(label, `${texts.length} text parts, expected 1`);
  verifyText(label, turn, texts[0]?.text ?? '');
}
