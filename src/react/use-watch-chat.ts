import type { UIMessage } from 'ai';
import { useEffect, useMemo, useRef, useSyncExternalStore } from 'react';
import {
  type FollowerState,
  SessionFollower,
  type SessionFollowerOptions,
} from '../transport/session-follower.js';
import type { SubagentEntry } from '../transport/subagent-messages.js';

/** Options of `useWatchChat`: a `SessionFollower`'s, without its callbacks' identity mattering. */
export type UseWatchChatOptions<UI_MESSAGE extends UIMessage = UIMessage> =
  SessionFollowerOptions<UI_MESSAGE>;

export interface UseWatchChatResult<UI_MESSAGE extends UIMessage = UIMessage>
  extends FollowerState<UI_MESSAGE> {
  /** Sub-agent messages of the followed turns, by tool call id. */
  subagents: ReadonlyMap<string, SubagentEntry<UI_MESSAGE>>;
  /** The follower behind the hook (its `client` holds the token and the cursor). */
  follower: SessionFollower<UI_MESSAGE>;
}

/**
 * A read-only view of a chat, live on any device: every turn (whoever started it) streams
 * in, through drops, reloads and token expiry; it never appends. Give it the chat route's
 * `getWatchToken` for a token that cannot append:
 *
 * ```tsx
 * const routes = createRouteSessionCallbacks({ endpoint: '/api/chat-session' });
 * const { messages, turnLive } = useWatchChat({ baseURL, chatId, getAccessToken: routes.getWatchToken });
 * ```
 *
 * One follower per (`chatId`, `baseURL`, `sessionId`); callbacks are read from the latest
 * render. `messages` and `from` are read when the follower is created.
 */
export function useWatchChat<UI_MESSAGE extends UIMessage = UIMessage>(
  options: UseWatchChatOptions<UI_MESSAGE>,
): UseWatchChatResult<UI_MESSAGE> {
  const latest = useRef(options);
  latest.current = options;
  const { chatId, baseURL, sessionId } = options;
  // Created during render without I/O (the first request goes out from the effect).
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new follower only for another chat.
  const follower = useMemo(
    () =>
      new SessionFollower<UI_MESSAGE>({
        ...latest.current,
        getAccessToken: (input) => latest.current.getAccessToken(input),
        onTurnStart: (turn) => latest.current.onTurnStart?.(turn),
        onChunk: (chunk, turn) => latest.current.onChunk?.(chunk, turn),
        onTurnEnd: (message, turn) => latest.current.onTurnEnd?.(message, turn),
        onEvent: (event) => latest.current.onEvent?.(event),
      }),
    [chatId, baseURL, sessionId],
  );
  // StrictMode unmounts and mounts again at once: only an unmount that outlives a macrotask stops it.
  useEffect(() => {
    attachments.set(follower, (attachments.get(follower) ?? 0) + 1);
    follower.start();
    return () => {
      attachments.set(follower, (attachments.get(follower) ?? 1) - 1);
      setTimeout(() => {
        if ((attachments.get(follower) ?? 0) === 0) follower.stop();
      }, 0);
    };
  }, [follower]);
  const state = useSyncExternalStore(follower.subscribe, follower.getState, follower.getState);
  const subagents = useSyncExternalStore(
    follower.subagents.subscribe,
    follower.subagents.getSnapshot,
    follower.subagents.getSnapshot,
  );
  return { ...state, subagents, follower };
}

/** Mounted components per follower (a StrictMode remount counts again before the stop runs). */
const attachments = new WeakMap<object, number>();
