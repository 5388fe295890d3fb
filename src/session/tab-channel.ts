import type { UIMessage } from 'ai';

/** What tabs of one chat tell each other over a BroadcastChannel. */
export type TabMessage =
  /** A tab started a turn (after its append was stored and its record saved). */
  | { type: 'turn-started'; tabId: string; message: UIMessage | undefined }
  /**
   * The owner's reply as it ended, so every tab ends with the same transcript (a tab that
   * only replayed a continuation, e.g. after a tool output, lacks the parts before it; a tab
   * whose read went past the owner's stop shows more). No `message`: the owner shows no reply
   * (stopped before the first chunk). `answers`: the user message the turn answers. `order`: the
   * ids of the owner's transcript (two messages sent before the first reply: the AI SDK shows
   * both messages, then the replies; a tab that followed shows the server's order).
   */
  | { type: 'turn-finished'; tabId: string; message?: UIMessage; answers?: string; order?: string[] }
  /**
   * A tab is about to append `stop` for the live turn: the owner's read then ends on a
   * turn-complete without content, which is that stop, not the agent refusing the turn.
   * `shown: false`: the stopping tab shows none of the turn (its read was not answered yet), so
   * it will not tell how the turn ended (an older tab leaves it out: taken as shown). `unsent`:
   * the stopping tab knows of no session yet, so it appends no `stop`: the turn's message, still
   * to be sent (again) by the tab that drives it, is not sent, or is stopped behind.
   */
  | { type: 'turn-stopped'; tabId: string; shown?: boolean; unsent?: boolean }
  /** Broadcast-lease mode: the owner is alive (also the answer to a rival's claim). */
  | { type: 'heartbeat'; tabId: string }
  /** Broadcast-lease mode: a tab wants to own the next turn. Lowest (at, tabId) wins. */
  | { type: 'claim'; tabId: string; at: number }
  /** Broadcast-lease mode: the owner let go. */
  | { type: 'released'; tabId: string };

/** The part of `BroadcastChannel` used here (injectable for tests and other hosts). */
export interface BroadcastChannelLike {
  postMessage(message: unknown): void;
  close(): void;
  addEventListener(type: 'message', listener: (event: MessageEvent) => void): void;
  removeEventListener(type: 'message', listener: (event: MessageEvent) => void): void;
}

/** The part of the Web Locks API used here (`navigator.locks`). */
export interface LockManagerLike {
  request<T>(
    name: string,
    options: { ifAvailable?: boolean; signal?: AbortSignal },
    callback: (lock: unknown) => T | Promise<T>,
  ): Promise<T>;
}

const TYPES = new Set(['turn-started', 'turn-finished', 'turn-stopped', 'heartbeat', 'claim', 'released']);

const isMessage = (value: unknown) =>
  typeof value === 'object' && value !== null && typeof (value as { id?: unknown }).id === 'string';

/** Accepts only well-formed messages: other code on the origin may share the channel name. */
export function parseTabMessage(data: unknown): TabMessage | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const message = data as Record<string, unknown>;
  if (typeof message.type !== 'string' || !TYPES.has(message.type) || typeof message.tabId !== 'string')
    return undefined;
  if (message.type === 'claim' && typeof message.at !== 'number') return undefined;
  if (message.type === 'turn-finished') {
    const { message: reply, answers, order } = message;
    if (reply === undefined ? typeof answers !== 'string' : !isMessage(reply)) return undefined;
    if (answers !== undefined && typeof answers !== 'string') return undefined;
    // Read as the owner's message ids by the receiving tab: a string's `includes` would match too.
    if (order !== undefined && !(Array.isArray(order) && order.every((id) => typeof id === 'string')))
      return undefined;
  }
  return message as unknown as TabMessage;
}

export function defaultLocks(): LockManagerLike | undefined {
  const navigatorLike = (globalThis as { navigator?: { locks?: LockManagerLike | null } }).navigator;
  return navigatorLike?.locks ?? undefined;
}

export function defaultBroadcastChannel(): ((name: string) => BroadcastChannelLike) | undefined {
  const Constructor = (globalThis as { BroadcastChannel?: new (name: string) => BroadcastChannelLike })
    .BroadcastChannel;
  return Constructor === undefined ? undefined : (name) => new Constructor(name);
}
