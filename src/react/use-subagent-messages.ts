import type { UIMessage } from 'ai';
import { useCallback, useState, useSyncExternalStore } from 'react';
import { type SubagentEntry, SubagentMessages } from '../transport/subagent-messages.js';

export interface UseSubagentMessagesResult<UI_MESSAGE extends UIMessage = UIMessage> {
  /** Every sub-agent so far, by the parent's tool call id. */
  subagents: ReadonlyMap<string, SubagentEntry<UI_MESSAGE>>;
  /** Give it to `useChat({ onData })`: applies `data-subagent` parts, once per `(toolCallId, seq)`. */
  onData(part: unknown): void;
  /** The framework-free store behind the hook. */
  source: SubagentMessages<UI_MESSAGE>;
}

/**
 * Sub-agent messages rebuilt from the `data-subagent` batches of a chat's turns. A batch seen
 * again (a turn replayed after a reload or a resume) is applied once.
 *
 * ```tsx
 * const { subagents, onData } = useSubagentMessages();
 * const chat = useChat({ id: session.id, transport: session.transport, onData });
 * const research = subagents.get(toolCallId)?.message;
 * ```
 *
 * Pass a `SubagentMessages` to render one kept elsewhere, e.g. a follower's `subagents`.
 */
export function useSubagentMessages<UI_MESSAGE extends UIMessage = UIMessage>(
  source?: SubagentMessages<UI_MESSAGE>,
): UseSubagentMessagesResult<UI_MESSAGE> {
  const [own] = useState(() => new SubagentMessages<UI_MESSAGE>());
  const store = source ?? own;
  const subagents = useSyncExternalStore(store.subscribe, store.getSnapshot, store.getSnapshot);
  const onData = useCallback((part: unknown) => void store.apply(part), [store]);
  return { subagents, onData, source: store };
}
