import type { UIMessage } from 'ai';
import { useEffect, useMemo, useRef, useSyncExternalStore } from 'react';
import type { AppendResult } from '../client/append-request.js';
import type { ChatSessionState } from '../client/session-store.js';
import type { SessionCallOptions, SessionChatTransport } from '../transport/session-chat-transport.js';
import { ChatSessionHandle } from './chat-session-handle.js';
import { type ChatSessionOptions, sessionIdentity, type TabState } from './chat-session-options.js';
import type { GuardedTransport } from './guarded-transport.js';
import type { SessionStateSource } from './session-registry.js';
import { type SessionView, toSessionView } from './session-view.js';
import { useSessionState } from './use-session-state.js';

export interface UseChatSessionResult<UI_MESSAGE extends UIMessage = UIMessage> {
  chatId: string;
  /** Give this to `useChat({ transport })` (or `new Chat`). Stable per chat id. */
  transport: GuardedTransport<UI_MESSAGE>;
  /** The underlying `SessionChatTransport` (its `getClient(chatId)` exposes the store). */
  sessionTransport: SessionChatTransport<UI_MESSAGE>;
  /** The chat's session state (re-renders on change; use `useSessionState` to read less). */
  state: SessionView;
  /** This tab's part: owner of the live turn, following another tab, and the coordination mode. */
  tab: TabState;
  /** For `useSessionState(session.source, selector)`. */
  source: SessionStateSource;
  /** Ends this page's stream and stops the agent's live turn (after a reload too). */
  stop(): Promise<void>;
  /** Closes the session for good through the `closeSession` option; the chat becomes read-only. */
  close(reason?: string): Promise<void>;
  /** Creates the session now rather than on the first send. */
  preload(): Promise<void>;
  /** Fires the agent's action handler; `resumeStream()` shows its output. */
  sendAction(action: unknown, options?: SessionCallOptions): Promise<AppendResult>;
  /** Steering: a user message for the agent while a turn streams. */
  sendPendingMessage(message: UI_MESSAGE, options?: SessionCallOptions): Promise<AppendResult>;
}

/**
 * One durable chat session per chat id: a transport and client created once (stable across
 * renders and StrictMode double mounts), the latest options read through a ref, the
 * store's state as React state, and the session actions. Changing `chatId` (or `baseURL`,
 * `taskIdentifier`, `persistence`) switches to a fresh session object; the old one is
 * disconnected (never stopped).
 */
export function useChatSession<UI_MESSAGE extends UIMessage = UIMessage>(
  options: ChatSessionOptions,
): UseChatSessionResult<UI_MESSAGE> {
  return useChatSessionWithHandle<UI_MESSAGE>(options).session;
}

const statusFields = (state: ChatSessionState) => ({
  status: state.status,
  closed: state.closed,
  closedReason: state.closedReason,
});

/**
 * `useChatSession` plus its handle, for `useSessionChat`. With `renderOn: 'status'` the
 * component re-renders only when the connection status or the closed flag changes (not on
 * every cursor move, which would defeat useChat's render throttle); `state` is then read
 * from the store when accessed.
 */
export function useChatSessionWithHandle<UI_MESSAGE extends UIMessage>(
  options: ChatSessionOptions,
  renderOn: 'state' | 'status' = 'state',
): { session: UseChatSessionResult<UI_MESSAGE>; handle: ChatSessionHandle<UI_MESSAGE> } {
  const latest = useRef(options);
  // Read by callbacks that run later (I/O), never during render: the newest props win.
  latest.current = options;
  const identity = sessionIdentity(options);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the identity string is the dependency.
  const handle = useMemo(() => new ChatSessionHandle<UI_MESSAGE>(latest), [identity]);
  useEffect(() => handle.attach(), [handle]);
  const selected = useSessionState(handle, renderOn === 'state' ? toSessionView : statusFields);
  const tab = useSyncExternalStore(handle.subscribeTab, handle.getTabState, handle.getTabState);
  const session = useMemo(
    (): UseChatSessionResult<UI_MESSAGE> => ({
      chatId: handle.chatId,
      transport: handle.transport,
      sessionTransport: handle.sessionTransport,
      source: handle,
      stop: () => handle.stop(),
      close: (reason?: string) => handle.close(reason),
      preload: () => handle.preload(),
      sendAction: (action: unknown, callOptions?: SessionCallOptions) =>
        handle.sendAction(action, callOptions),
      sendPendingMessage: (message: UI_MESSAGE, callOptions?: SessionCallOptions) =>
        handle.sendPendingMessage(message, callOptions),
      get state() {
        return renderOn === 'state' ? (selected as SessionView) : toSessionView(handle.getState());
      },
      tab,
    }),
    [handle, selected, tab, renderOn],
  );
  return { session, handle };
}
