import { Chat, type UseChatHelpers, useChat } from '@ai-sdk/react';
import type { ChatStatus, UIMessage } from 'ai';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { AppendResult } from '../client/append-request.js';
import type { SessionCallOptions } from '../transport/session-chat-transport.js';
import type { ChatSessionOptions } from './chat-session-options.js';
import {
  deriveSessionChatStatus,
  describeSessionChatStatus,
  type RequestPhase,
  type SessionChatStatus,
} from './session-chat-status.js';
import { type UseChatSessionResult, useChatSessionWithHandle } from './use-chat-session.js';
import { usePendingMessages } from './use-pending-messages.js';

/** Default wait between renders while a reply streams (ms): smooth to read, cheap to render. */
export const DEFAULT_RENDER_THROTTLE_MS = 50;

/** `Chat`'s options, taken from `@ai-sdk/react` itself (it may bundle its own copy of `ai`). */
type ReactChatInit<UI_MESSAGE extends UIMessage> = ConstructorParameters<typeof Chat<UI_MESSAGE>>[0];

export interface UseSessionChatOptions<UI_MESSAGE extends UIMessage = UIMessage>
  extends ChatSessionOptions,
    Omit<ReactChatInit<UI_MESSAGE>, 'id' | 'transport'> {
  /** Wait between renders while a reply streams, ms. Default 50; `0` renders on every chunk. */
  experimental_throttle?: number;
  /** Resume the turn that was live when the page loaded (exactly when the record says one is). Default true. */
  resume?: boolean;
  /**
   * How the agent treats steering messages (`sendPendingMessage`): `'next-turn'` (default,
   * the spec's default) answers each in a follow-up turn, which this hook then shows;
   * `'inject'` folds them into the running turn.
   */
  pendingMessages?: 'next-turn' | 'inject';
}

export type UseSessionChatResult<UI_MESSAGE extends UIMessage = UIMessage> = Omit<
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
   * The session (`useChatSession`'s result). Here `session.state` is read from the store
   * when accessed and does not cause renders of its own (the cursor moves with every
   * batch); use `useSessionState(session.source, selector)` to render on a field.
   */
  session: UseChatSessionResult<UI_MESSAGE>;
};

const resumedChats = new WeakSet<object>();

function isBusy(status: ChatStatus): boolean {
  return status === 'submitted' || status === 'streaming';
}

/**
 * `useChat` over a durable session in one call: resumes a live turn on mount, stops for
 * real, shows one combined status, throttles renders, follows turns of other tabs.
 */
export function useSessionChat<UI_MESSAGE extends UIMessage = UIMessage>(
  options: UseSessionChatOptions<UI_MESSAGE>,
): UseSessionChatResult<UI_MESSAGE> {
  const { session, handle } = useChatSessionWithHandle<UI_MESSAGE>(options, 'status');
  const latest = useRef(options);
  latest.current = options;
  // One Chat per session handle; its callbacks read the newest options through `latest`.
  const chat = useMemo(() => {
    const initial = latest.current;
    return new Chat<UI_MESSAGE>({
      id: handle.chatId,
      messages: initial.messages,
      generateId: initial.generateId,
      messageMetadataSchema: initial.messageMetadataSchema,
      dataPartSchemas: initial.dataPartSchemas,
      transport: handle.transport,
      onError: (error) => latest.current.onError?.(error),
      onToolCall: (call) => latest.current.onToolCall?.(call),
      onFinish: (event) => latest.current.onFinish?.(event),
      onData: (part) => latest.current.onData?.(part),
      sendAutomaticallyWhen: (input) => latest.current.sendAutomaticallyWhen?.(input) ?? false,
    });
  }, [handle]);
  const throttle = options.experimental_throttle ?? DEFAULT_RENDER_THROTTLE_MS;
  // useChat takes `undefined` (not 0) as "no throttle".
  const helpers = useChat<UI_MESSAGE>({ chat, experimental_throttle: throttle > 0 ? throttle : undefined });

  const [phase, setPhase] = useState<RequestPhase>('none');
  // Set from the call until the resumed stream is done: useChat's status lags a tick behind.
  const resuming = useRef(false);
  const resume = useCallback(() => {
    if (resuming.current) return;
    resuming.current = true;
    setPhase('resuming');
    const done = () => {
      resuming.current = false;
    };
    // useChat reports a failed resume through `error` / onError; anything else is unexpected.
    chat.resumeStream().then(done, (error: unknown) => {
      done();
      handle.client.environment.warn(`resuming the stream failed: ${String(error)}`);
    });
  }, [chat, handle]);

  useEffect(
    () =>
      handle.onEvent((event) => {
        if (event.type === 'message-sent' && (event.kind === 'message' || event.kind === 'regenerate')) {
          setPhase('appended');
        } else if (event.type === 'first-chunk') setPhase('receiving');
      }),
    [handle],
  );
  useEffect(() => {
    if (!isBusy(helpers.status)) setPhase('none');
  }, [helpers.status]);

  const resumeOnMount = options.resume !== false;
  useEffect(() => {
    if (!resumeOnMount) return;
    let active = true;
    handle.client.ready().then(
      () => {
        const state = handle.getState();
        // Exactly when the record says a turn is live: a finished turn needs no request at all.
        if (!active || !state.turnLive || state.closed || resumedChats.has(chat) || isBusy(chat.status))
          return;
        resumedChats.add(chat);
        resume();
      },
      (error: unknown) =>
        handle.client.environment.warn(`could not load the chat's record: ${String(error)}`),
    );
    return () => {
      active = false;
    };
  }, [handle, chat, resume, resumeOnMount]);

  useEffect(() => {
    const show = (turn: { message: UI_MESSAGE | undefined }) => {
      if (isBusy(chat.status) || resuming.current) return;
      const { message } = turn;
      if (message !== undefined && !chat.messages.some((existing) => existing.id === message.id)) {
        chat.messages = [...chat.messages, message];
      }
      resume();
    };
    handle.remoteTurnHandler = show;
    return () => {
      if (handle.remoteTurnHandler === show) handle.remoteTurnHandler = undefined;
    };
  }, [handle, chat, resume]);

  const pending = usePendingMessages(
    chat,
    helpers.status,
    handle,
    resume,
    options.pendingMessages ?? 'next-turn',
  );

  const now = useNowWhile(session.state.status.type === 'reconnecting');
  const sessionStatus = deriveSessionChatStatus({
    chatStatus: helpers.status,
    chatError: helpers.error,
    session: session.state,
    phase,
    following: session.tab.following,
    now,
  });

  const stop = useCallback(async () => {
    void chat.stop();
    await handle.stop();
  }, [chat, handle]);
  const sendAction = useCallback(
    async (action: unknown, callOptions?: SessionCallOptions) => {
      const result = await handle.sendAction(action, callOptions);
      if (!isBusy(chat.status)) resume();
      return result;
    },
    [chat, handle, resume],
  );

  return {
    ...helpers,
    stop,
    sessionStatus,
    statusLabel: describeSessionChatStatus(sessionStatus),
    sendAction,
    sendPendingMessage: pending.send,
    pendingMessages: pending.messages,
    close: session.close,
    preload: session.preload,
    session,
  };
}

/** Re-renders every second while `active` (a "reconnecting in 3 s" countdown). */
function useNowWhile(active: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [active]);
  return now;
}
