import type { ChatStatus, UIMessage } from 'ai';
import { useEffect, useInsertionEffect, useMemo, useSyncExternalStore } from 'react';
import type { AppendResult } from '../client/append-request.js';
import type { ChatSessionState } from '../client/session-store.js';
import { ValidationError } from '../errors/validation-error.js';
import { ChatSessionHandle } from '../session/chat-session-handle.js';
import { type ChatSessionOptions, sessionIdentity, type TabState } from '../session/chat-session-options.js';
import type { GuardedTransport } from '../session/guarded-transport.js';
import type { ActivityPhase, RequestActivity } from '../session/request-activity.js';
import {
  deriveSessionChatStatus,
  describeSessionChatStatus,
  type RequestPhase,
  type SessionChatStatus,
} from '../session/session-chat-status.js';
import type { SessionStateSource } from '../session/session-registry.js';
import { type SessionView, toSessionView } from '../session/session-view.js';
import type { SessionCallOptions, SessionChatTransport } from '../transport/session-chat-transport.js';
import { useNowWhile } from './use-now-while.js';
import { useSessionState } from './use-session-state.js';
import { useStatusLabelForInspectors } from './use-status-label-for-inspectors.js';

export interface UseChatSessionResult<UI_MESSAGE extends UIMessage = UIMessage> {
  /** The chat id: pass it to `useChat({ id: session.id, transport: session.transport, resume: true })`. */
  id: string;
  /** Same as `id`. */
  chatId: string;
  /**
   * Give this to `useChat({ id: session.id, transport })` (or `new Chat`). Stable per chat id
   * and bound to it: a call for another chat id fails with `INVALID_INPUT` (field `chatId`).
   */
  transport: GuardedTransport<UI_MESSAGE>;
  /** The underlying `SessionChatTransport` (its `getClient(chatId)` exposes the store). */
  sessionTransport: SessionChatTransport<UI_MESSAGE>;
  /**
   * The chat's session state, read when accessed. The component re-renders when the
   * connection status, `turnLive`, `closed`, the session or run id, `lastError` or
   * `hydrated` change, never for a cursor move (`lastEventId` moves with every batch);
   * use `useSessionState(session.source, selector)` to render on any other field.
   */
  state: SessionView;
  /** One status for the UI: sending, waking, resuming, streaming (or following another tab), reconnecting, closed, error. */
  status: SessionChatStatus;
  /** `describeSessionChatStatus(status)`, e.g. "Reconnecting in 3 s". */
  statusLabel: string;
  /** This tab's part: owner of the live turn, following another tab, and the coordination mode. */
  tab: TabState;
  /**
   * True while this tab shows a turn another tab owns (a turn `useFollowTurns` shows, or the
   * resume `useChat({ resume: true })` starts in a tab opened while another tab's turn streams):
   * `useChat`'s `onToolCall`, `onFinish` and `sendAutomaticallyWhen` should then leave the turn
   * to its owner.
   */
  isFollowingTurn(): boolean;
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
 * One durable chat session per chat id, for the AI SDK's own `useChat`:
 *
 * ```tsx
 * const session = useChatSession({ chatId, baseURL, taskIdentifier, startSession });
 * const chat = useChat({ id: session.id, transport: session.transport, resume: true });
 * ```
 *
 * The transport and client are created once per chat (stable across renders and
 * StrictMode double mounts) and read the latest options through a ref. `useChat`'s
 * `stop()` stops the agent; unmounting or switching chats only disconnects. Changing
 * `chatId` (or `baseURL`, `taskIdentifier`, `persistence`) switches to a fresh session
 * object; the old one is disconnected (never stopped).
 */
export function useChatSession<UI_MESSAGE extends UIMessage = UIMessage>(
  options: ChatSessionOptions,
): UseChatSessionResult<UI_MESSAGE> {
  return useChatSessionWithHandle<UI_MESSAGE>(options).session;
}

/** What re-renders the session hook: status-like fields, never the cursor or the token. */
const renderFields = (state: ChatSessionState) => ({
  status: state.status,
  closed: state.closed,
  closedReason: state.closedReason,
  turnLive: state.turnLive,
  hydrated: state.hydrated,
  sessionId: state.sessionId,
  runId: state.runId,
  lastError: state.lastError,
});

const REQUEST_PHASE: Record<ActivityPhase, RequestPhase> = {
  none: 'none',
  sending: 'none',
  appended: 'appended',
  resuming: 'resuming',
  receiving: 'receiving',
};

function chatStatusOf(activity: RequestActivity): ChatStatus {
  if (activity.phase === 'none') return activity.error === undefined ? 'ready' : 'error';
  return activity.phase === 'receiving' ? 'streaming' : 'submitted';
}

/** The status of the `useChat` + `useChatSession` path, from what the transport sees. */
function activityStatus(
  activity: RequestActivity,
  fields: ReturnType<typeof renderFields>,
  tab: TabState,
  now: number,
): SessionChatStatus {
  const chatStatus = chatStatusOf(activity);
  const idle = chatStatus === 'ready' || chatStatus === 'error';
  // Another tab's turn streams: this tab shows it read-only (or at least says so).
  if (idle && tab.following && !fields.closed) return { type: 'streaming', following: true };
  return deriveSessionChatStatus({
    chatStatus,
    chatError: activity.error,
    session: fields,
    phase: REQUEST_PHASE[activity.phase],
    following: tab.following,
    now,
  });
}

/** The handle behind a `useChatSession` result (for the hooks of this package). */
export function sessionHandleOf<UI_MESSAGE extends UIMessage>(
  session: UseChatSessionResult<UI_MESSAGE>,
): ChatSessionHandle<UI_MESSAGE> {
  const handle = session.source;
  if (!(handle instanceof ChatSessionHandle)) {
    throw new ValidationError({ message: 'pass the result of useChatSession', field: 'session' });
  }
  return handle as ChatSessionHandle<UI_MESSAGE>;
}

/** `useChatSession` plus its handle, for `useDurableChat`. */
export function useChatSessionWithHandle<UI_MESSAGE extends UIMessage>(
  options: ChatSessionOptions,
): { session: UseChatSessionResult<UI_MESSAGE>; handle: ChatSessionHandle<UI_MESSAGE> } {
  const identity = sessionIdentity(options);
  // Created during render without I/O, from this render's options.
  // biome-ignore lint/correctness/useExhaustiveDependencies: the identity string is the dependency.
  const handle = useMemo(() => new ChatSessionHandle<UI_MESSAGE>(options), [identity]);
  // Callbacks and requests read the options of the newest *committed* render: a render that a
  // suspended transition holds back (chat B's, while chat A is still on screen) never reaches
  // them. Insertion effects run before every layout and passive effect of the commit.
  useInsertionEffect(() => handle.commitOptions(options), [handle, options]);
  useEffect(() => handle.attach(), [handle]);
  const fields = useSessionState(handle.renderSource, renderFields);
  const tab = useSyncExternalStore(handle.subscribeTab, handle.getTabState, handle.getTabState);
  const activity = useSyncExternalStore(
    handle.subscribeActivityForRender,
    handle.activity.get,
    handle.activity.get,
  );
  const now = useNowWhile(fields.status.type === 'reconnecting');
  const session = useMemo((): UseChatSessionResult<UI_MESSAGE> => {
    const status = activityStatus(activity, fields, tab, now);
    return {
      id: handle.chatId,
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
        return toSessionView(handle.getState());
      },
      status,
      statusLabel: describeSessionChatStatus(status),
      tab,
      isFollowingTurn: () => handle.followedRequests > 0,
    };
  }, [handle, fields, tab, activity, now]);
  useStatusLabelForInspectors(handle, session.statusLabel);
  return { session, handle };
}
