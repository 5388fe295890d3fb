import type { UIMessage, UIMessageChunk } from 'ai';
import { createMessageBuilder, type MessageBuilder } from './message-builder.js';

/** The data of a `data-subagent` chunk: one batch of a sub-agent's chunks. */
export interface SubagentBatch {
  /** The tool call of the parent agent that runs the sub-agent. */
  toolCallId: string;
  /** Counts from 0 per `toolCallId`. */
  seq: number;
  chunks: UIMessageChunk[];
}

/** One sub-agent's message as rebuilt so far. */
export interface SubagentEntry<UI_MESSAGE extends UIMessage = UIMessage> {
  toolCallId: string;
  /** `undefined` until the reducer has taken the first chunk. */
  message: UI_MESSAGE | undefined;
  /** Batches applied (the next `seq` expected). */
  applied: number;
  /** The sub-agent's `finish` chunk was applied. */
  finished: boolean;
  /** The reducer refused a chunk: the message stops there. */
  error: unknown;
}

export const SUBAGENT_CHUNK_TYPE = 'data-subagent';

/** Reads a `data-subagent` chunk or data part (`{type, data}`); anything else is `undefined`. */
export function readSubagentBatch(part: unknown): SubagentBatch | undefined {
  if (typeof part !== 'object' || part === null) return undefined;
  const { type, data } = part as { type?: unknown; data?: unknown };
  if (type !== SUBAGENT_CHUNK_TYPE || typeof data !== 'object' || data === null) return undefined;
  const { toolCallId, seq, chunks } = data as Record<string, unknown>;
  if (typeof toolCallId !== 'string' || toolCallId === '') return undefined;
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0 || !Array.isArray(chunks))
    return undefined;
  return { toolCallId, seq, chunks: chunks as UIMessageChunk[] };
}

/** Batches held back while an earlier `seq` of the same tool call is missing. */
const MAX_HELD_BATCHES = 256;

interface Track<UI_MESSAGE extends UIMessage> {
  entry: SubagentEntry<UI_MESSAGE>;
  builder: MessageBuilder<UI_MESSAGE>;
  held: Map<number, SubagentBatch>;
}

/**
 * Rebuilds sub-agent messages from `data-subagent` batches (`{toolCallId, seq, chunks}`),
 * framework-free. Each batch is applied once per `(toolCallId, seq)`: a batch seen again
 * (a stream replayed after a reload or a resume, a re-sent batch) is skipped, and one that
 * arrives ahead of a missing `seq` waits for it. Messages go through the AI SDK's reducer.
 *
 * ```ts
 * const subagents = new SubagentMessages();
 * useChat({ ..., onData: (part) => subagents.apply(part) });
 * subagents.subscribe(() => render(subagents.get('call_1')?.message));
 * ```
 */
export class SubagentMessages<UI_MESSAGE extends UIMessage = UIMessage> {
  private readonly tracks = new Map<string, Track<UI_MESSAGE>>();
  private readonly listeners = new Set<() => void>();
  private snapshot: ReadonlyMap<string, SubagentEntry<UI_MESSAGE>> = new Map();

  /**
   * Applies a `data-subagent` chunk or data part. Returns `true` when it was new (applied, or
   * held until the batches before it arrive), `false` for a repeat or anything else.
   */
  apply(part: unknown): boolean {
    const batch = readSubagentBatch(part);
    if (batch === undefined) return false;
    const track = this.track(batch.toolCallId);
    if (batch.seq < track.entry.applied || track.held.has(batch.seq)) return false;
    if (batch.seq > track.entry.applied) {
      if (track.held.size >= MAX_HELD_BATCHES) return false;
      track.held.set(batch.seq, batch);
      this.publish();
      return true;
    }
    this.take(track, batch);
    for (
      let next = track.held.get(track.entry.applied);
      next !== undefined;
      next = track.held.get(track.entry.applied)
    ) {
      track.held.delete(next.seq);
      this.take(track, next);
    }
    return true;
  }

  /** The sub-agent of one tool call. */
  get(toolCallId: string): SubagentEntry<UI_MESSAGE> | undefined {
    return this.snapshot.get(toolCallId);
  }

  /** Every sub-agent by tool call id; a new map object whenever anything changed. */
  getSnapshot = (): ReadonlyMap<string, SubagentEntry<UI_MESSAGE>> => this.snapshot;

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /** Resolves once every chunk applied so far has gone through the reducer. */
  async settled(): Promise<void> {
    // The reducer runs a few microtasks behind; a macrotask is past all of them.
    await new Promise((resolve) => setTimeout(resolve, 0));
  }

  /** Forgets every sub-agent (a new chat). */
  clear(): void {
    for (const track of this.tracks.values()) void track.builder.end();
    this.tracks.clear();
    this.publish();
  }

  private track(toolCallId: string): Track<UI_MESSAGE> {
    const existing = this.tracks.get(toolCallId);
    if (existing !== undefined) return existing;
    const entry: SubagentEntry<UI_MESSAGE> = {
      toolCallId,
      message: undefined,
      applied: 0,
      finished: false,
      error: undefined,
    };
    const track: Track<UI_MESSAGE> = {
      entry,
      held: new Map(),
      builder: createMessageBuilder<UI_MESSAGE>({
        onMessage: (message) => this.update(toolCallId, { message }),
        onError: (error) => this.update(toolCallId, { error }),
      }),
    };
    this.tracks.set(toolCallId, track);
    return track;
  }

  private take(track: Track<UI_MESSAGE>, batch: SubagentBatch): void {
    let finished = track.entry.finished;
    for (const chunk of batch.chunks) {
      if (typeof chunk !== 'object' || chunk === null) continue;
      track.builder.push(chunk);
      if (chunk.type === 'finish' || chunk.type === 'abort') finished = true;
    }
    this.update(track.entry.toolCallId, { applied: batch.seq + 1, finished });
    if (finished) void track.builder.end();
  }

  private update(toolCallId: string, change: Partial<SubagentEntry<UI_MESSAGE>>): void {
    const track = this.tracks.get(toolCallId);
    if (track === undefined) return;
    track.entry = { ...track.entry, ...change };
    this.publish();
  }

  private publish(): void {
    const next = new Map<string, SubagentEntry<UI_MESSAGE>>();
    for (const [id, track] of this.tracks) next.set(id, track.entry);
    this.snapshot = next;
    for (const listener of [...this.listeners]) listener();
  }
}
