import { useCallback, useMemo, useRef, useSyncExternalStore } from 'react';
import { type ChatSessionState, initialSessionState } from '../client/session-store.js';
import { type SessionStateSource, sessionRegistry } from '../session/session-registry.js';
import { shallowEqual } from '../session/shallow-equal.js';

interface Memo<T> {
  state: ChatSessionState;
  selector: (state: ChatSessionState) => T;
  selection: T;
}

/**
 * Reads one chat's session state through `selector` and re-renders only when the selected
 * value changes (compared with `isEqual`, shallow by default). `chat` is a chat id (the
 * chat mounted by `useChatSession` / `useDurableChat` anywhere on the page) or the object
 * `useChatSession` returned. Before that chat mounts, and during server rendering, the
 * selector sees the chat's initial state (`status: idle`, nothing known).
 */
export function useSessionState<T>(
  chat: string | SessionStateSource,
  selector: (state: ChatSessionState) => T,
  isEqual: (a: T, b: T) => boolean = shallowEqual,
): T {
  const chatId = typeof chat === 'string' ? chat : chat.chatId;
  const direct = typeof chat === 'string' ? undefined : chat;
  const initial = useMemo(() => initialSessionState(chatId), [chatId]);
  const memo = useRef<Memo<T> | undefined>(undefined);

  const subscribe = useCallback(
    (onChange: () => void) => {
      if (direct !== undefined) return direct.subscribe(onChange);
      let current = sessionRegistry.get(chatId);
      let unsubscribeSource = current?.subscribe(onChange);
      const unsubscribeRegistry = sessionRegistry.subscribe(() => {
        const next = sessionRegistry.get(chatId);
        if (next === current) return;
        unsubscribeSource?.();
        current = next;
        unsubscribeSource = current?.subscribe(onChange);
        onChange();
      });
      return () => {
        unsubscribeRegistry();
        unsubscribeSource?.();
      };
    },
    [chatId, direct],
  );

  const select = (state: ChatSessionState): T => {
    const previous = memo.current;
    if (previous !== undefined && previous.state === state && previous.selector === selector)
      return previous.selection;
    const selection = selector(state);
    // Keep the previous value when it is equal, so React sees the same snapshot and skips the render.
    const kept =
      previous !== undefined && isEqual(previous.selection, selection) ? previous.selection : selection;
    memo.current = { state, selector, selection: kept };
    return kept;
  };

  const getSnapshot = () => select((direct ?? sessionRegistry.get(chatId))?.getState() ?? initial);
  const getServerSnapshot = () => select(initial);
  return useSyncExternalStore(subscribe, getSnapshot, getServerSnapshot);
}
