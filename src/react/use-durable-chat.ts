import { type UseChatHelpers, useChat } from '@ai-sdk/react';
import type { ChatStatus, UIMessage } from 'ai';
import { useCallback, useEffect, useInsertionEffect, useMemo, useSyncExternalStore } from 'react';
import type { AppendResult } from '../client/append-request.js';
import type { ChatSessionOptions } from '../session/chat-session-options.js';
import type { ActivityPhase } from '../session/request-activity.js';
import {
  deriveSessionChatStatus,
  describeSessionChatStatus,
  type RequestPhase,
  type SessionChatStatus,
} from '../session/session-chat-status.js';
import type { SessionCallOptions } from '../transport/session-chat-transport.js';
import { DurableChatController, type ReactChatInit } from './durable-chat-controller.js';
import { type UseChatSessionResult, useChatSessionWithHandle } from './use-chat-session.js';
import { useNowWhile } from './use-now-while.js';
import { useStatusLabelForInspectors } from './use-status-label-for-inspectors.js';

export { DEFAULT_RENDER_THROTTLE_MS } from '../session/delta-pacer.js';

export interface UseDurableChatOptions<UI_MESSAGE extends UIMessage = UIMessage>
  extends ChatSessionOptions,
    Omit<ReactChatInit<UI_MESSAGE>, 'id' | 'transport'> {
  /**
   * The render window while a reply streams, ms. Default 40: at most about one render per
   * window, and no text delta waits longer than that to be shown. `0` renders on every
   * chunk. (`@ai-sdk/react` 4's name; see `ChatSessionOptions.throttle`.)
   */
  throttle?: number;
  /** The same as `throttle` (`@ai-sdk/react` 3's name); `throttle` wins when both are given. */
  experimental_throttle?: number;
  /**
   * ai 7: queue messages sent while a reply streams and send them one at a time after it
   * (the AI SDK's own queue). With ai 6, `true` is refused with `INVALID_INPUT`.
   */
  experimental_queue?: boolean;
  /** Resume the turn that was live when the page loaded (exactly when the record says one is). Default true. */
  resume?: boolean;
  /**
   * How the agent treats steering messages (`sendPendingMessage`): `'next-turn'` (default,
   * the spec's default) answers each in a follow-up turn, which this hook then shows;
   * `'inject'` folds them into the running turn.
   */
  pendingMessages?: 'next-turn' | 'inject';
}

export type UseDurableChatResult<UI_MESSAGE extends UIMessage = UIMessage> = Omit<
  UseChatHelpers<UI_MESSAGE>,
  'stop'
> & {
  /** Combined status for the UI (sending, waking, resuming, streaming, reconnecting, closed, error). */
  sessionStatus: SessionChatStatus;
  /** `describeSessionChatStatus(sessionStatus)`, e.g. "Reconnecting in 3 s". */
  statusLabel: string;
  /** Aborts the local stream and stops the agent's turn, also after a reload or from a following tab. */
  stop(): Promise<void>;
  /** Fires an action and shows its output. */
  sendAction(action: unknown, options?: SessionCallOptions): Promise<AppendResult>;
  /** Steering while a reply streams: text or a user message. */
  sendPendingMessage(message: string | UI_MESSAGE, options?: SessionCallOptions): Promise<AppendResult>;
  /** Steering messages sent but not yet in `messages`. */
  pendingMessages: UI_MESSAGE[];
  close(reason?: string): Promise<void>;
  preload(): Promise<void>;
  /**
   * The session (`useChatSession`'s result). `session.state` is read from the store when
   * accessed (the cursor moves with every batch and causes no render); use
   * `useSessionState(session.source, selector)` to render on a field.
   */
  session: UseChatSessionResult<UI_MESSAGE>;
};

function isBusy(status: ChatStatus): boolean {
  return status === 'submitted' || status === 'streaming';
}

const REQUEST_PHASE: Record<ActivityPhase, RequestPhase> = {
  none: 'none',
  sending: 'none',
  appended: 'appended',
  resuming: 'resuming',
  receiving: 'receiving',
};

/**
 * `useChat` over a durable session in one call: resumes a live turn on mount, stops for
 * real, shows one combined status, throttles renders, follows turns of other tabs, and
 * switches chats without remounting (each chat keeps its own callbacks, queue and resume).
 */
export function useDurableChat<UI_MESSAGE extends UIMessage = UIMessage>(
  options: UseDurableChatOptions<UI_MESSAGE>,
): UseDurableChatResult<UI_MESSAGE> {
  // The session's transport paces the deltas (one window for both React paths); useChat
  // then renders per chunk it reads, so it gets no throttle of its own (two would add up).
  const throttle = options.throttle ?? options.experimental_throttle;
  const { session, handle } = useChatSessionWithHandle<UI_MESSAGE>(
    throttle === undefined ? options : { ...options, throttle },
  );
  // One controller (and Chat) per session handle; the Chat's callbacks read the options of
  // the newest committed render (never those of a render a suspended transition holds back).
  // biome-ignore lint/correctness/useExhaustiveDependencies: a controller per handle, created with this render's options.
  const controller = useMemo(() => new DurableChatController<UI_MESSAGE>(handle, options), [handle]);
  useInsertionEffect(() => controller.commitOptions(options), [controller, options]);
  const { chat } = controller;
  const helpers = useChat<UI_MESSAGE>({ chat });

  useEffect(() => controller.show(), [controller]);

  const resumeOnMount = options.resume !== false;
  useEffect(() => {
    if (!resumeOnMount) return;
    let active = true;
    void controller.resumeOnMount(() => active);
    return () => {
      active = false;
    };
  }, [controller, resumeOnMount]);

  useEffect(() => {
    if (isBusy(helpers.status)) return;
    controller.whenIdle();
    if (helpers.status === 'ready') controller.flushPending();
  }, [helpers.status, controller]);
  const pendingMessages = useSyncExternalStore(
    controller.subscribePending,
    controller.pendingMessages,
    controller.pendingMessages,
  );

  const activity = useSyncExternalStore(
    handle.subscribeActivityForRender,
    handle.activity.get,
    handle.activity.get,
  );
  const now = useNowWhile(session.state.status.type === 'reconnecting');
  // useChat says `ready` until its resume returns a stream (a reloaded page's read may wait for
  // its first answer up to the connect timeout): the transport knows the resume is under way.
  const resumePending = helpers.status === 'ready' && activity.phase === 'resuming';
  const sessionStatus = deriveSessionChatStatus({
    chatStatus: resumePending ? 'submitted' : helpers.status,
    chatError: helpers.error,
    session: session.state,
    phase: isBusy(helpers.status) || resumePending ? REQUEST_PHASE[activity.phase] : 'none',
    following: session.tab.following,
    now,
  });

  const stop = useCallback(async () => {
    void chat.stop();
    await handle.stop();
  }, [chat, handle]);
  const sendAction = useCallback(
    (action: unknown, callOptions?: SessionCallOptions) => controller.sendAction(action, callOptions),
    [controller],
  );
  const sendPendingMessage = useCallback(
    (message: string | UI_MESSAGE, callOptions?: SessionCallOptions) =>
      controller.sendPendingMessage(message, callOptions),
    [controller],
  );

  const statusLabel = describeSessionChatStatus(sessionStatus);
  useStatusLabelForInspectors(handle, statusLabel);
  return {
    ...helpers,
    stop,
    sessionStatus,
    statusLabel,
    sendAction,
    sendPendingMessage,
    pendingMessages,
    close: session.close,
    preload: session.preload,
    session,
  };
}
