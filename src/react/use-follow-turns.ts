import type { ChatStatus, UIMessage } from 'ai';
import { useEffect, useInsertionEffect, useRef } from 'react';
import type { RemoteTurn } from './chat-session-options.js';
import { followOtherDevices, type OtherDevicesOptions } from './device-follow.js';
import type { UseChatSessionResult } from './use-chat-session.js';
import { sessionHandleOf } from './use-chat-session.js';

/** The parts of `useChat`'s result that showing another tab's turn (and its status) needs. */
export interface FollowableChat<UI_MESSAGE extends UIMessage = UIMessage> {
  status: ChatStatus;
  error?: Error | undefined;
  messages: UI_MESSAGE[];
  setMessages(messages: UI_MESSAGE[]): void;
  resumeStream(): Promise<void>;
}

const isBusy = (status: ChatStatus) => status === 'submitted' || status === 'streaming';

export interface FollowTurnsOptions {
  /**
   * Also follow turns started on other devices (a phone, another browser, a server job):
   * a standing `.out` watch hands each to `useChat`, which resumes it and shows the reply
   * (its user message shows only where the app loads it from its own store). `true` reads
   * with the chat's session token; `{ getAccessToken }` with another, e.g. a read-only watch
   * token. Default `false`: only the tabs of this browser.
   */
  otherDevices?: boolean | OtherDevicesOptions;
}

/**
 * Shows turns that another tab of this browser starts on the same chat in your own
 * `useChat`, read-only, as `useDurableChat` does: the other tab's user message is added
 * and its reply streams in (`session.status` is `{type: 'streaming', following: true}`).
 * When a reply ends, the tab that made it tells the others, which replace their copy, so
 * every tab ends with the same transcript (a continuation after a tool output, replayed
 * alone, lacks the parts before it).
 *
 * ```tsx
 * const session = useChatSession(options);
 * const chat = useChat({ id: session.id, transport: session.transport, resume: true });
 * useFollowTurns(session, chat);
 * ```
 *
 * `useFollowTurns(session, chat, { otherDevices: true })` follows turns that other devices
 * start as well (see `FollowTurnsOptions`). A device that follows can still send: that
 * turn is then its own.
 *
 * The following tab's `useChat` callbacks run for the followed turn too (they belong to
 * `useChat`): return early when `session.isFollowingTurn()` in `onToolCall`, `onFinish`
 * and `sendAutomaticallyWhen`, so only the owner answers; `useDurableChat` does that
 * for you.
 */
export function useFollowTurns<UI_MESSAGE extends UIMessage>(
  session: UseChatSessionResult<UI_MESSAGE>,
  chat: FollowableChat<UI_MESSAGE>,
  options: FollowTurnsOptions = {},
): void {
  const latest = useRef(chat);
  // The committed render's chat (a render held back by a suspended transition never gets here).
  useInsertionEffect(() => {
    latest.current = chat;
  });
  const handle = sessionHandleOf(session);
  // Applies another tab's final reply once this chat is idle (also re-tried when it becomes idle).
  const applyPending = useRef<() => void>(() => {});

  useEffect(() => {
    let resuming = false;
    let remoteFinal: UI_MESSAGE | undefined;
    /** Another tab's turn, announced while this chat was busy (its own send waiting for the lock): shown once idle. */
    let pendingTurn: RemoteTurn<UI_MESSAGE> | undefined;
    const applyRemoteFinal = () => {
      const current = latest.current;
      const message = remoteFinal;
      if (message === undefined || resuming || isBusy(current.status)) return;
      remoteFinal = undefined;
      const index = current.messages.findIndex((existing) => existing.id === message.id);
      if (index === -1) return;
      const messages = [...current.messages];
      messages[index] = message;
      current.setMessages(messages);
    };
    const show = (turn: RemoteTurn<UI_MESSAGE>) => {
      const current = latest.current;
      if (resuming || isBusy(current.status)) {
        pendingTurn = turn;
        return;
      }
      pendingTurn = undefined;
      const { message } = turn;
      // A send of this tab that lost the race to this turn was never sent: it leaves the transcript.
      let messages = handle.withoutRefused(current.messages);
      if (message !== undefined && !messages.some((existing) => existing.id === message.id))
        messages = [...messages, message];
      if (messages !== current.messages) current.setMessages(messages);
      resuming = true;
      // A turn this tab took over (its owner went away; or it was this page's own before a
      // reload) is this tab's to answer, as in useDurableChat; another tab's turn is followed.
      const followed = !handle.getTabState().owner;
      if (followed) handle.followedRequests += 1;
      const done = () => {
        resuming = false;
        if (followed) handle.followedRequests -= 1;
        whenIdle();
      };
      current.resumeStream().then(done, (error: unknown) => {
        done();
        handle.client.environment.warn(`following the other tab's turn failed: ${String(error)}`);
      });
    };
    /** The chat is idle: a turn announced meanwhile is shown, a refused send leaves, a final reply applies. */
    const whenIdle = () => {
      const current = latest.current;
      if (resuming || isBusy(current.status)) return;
      if (pendingTurn !== undefined) {
        show(pendingTurn);
        return;
      }
      const messages = handle.withoutRefused(current.messages);
      if (messages !== current.messages) current.setMessages(messages);
      applyRemoteFinal();
    };
    const onRemoteFinish = (message: UI_MESSAGE) => {
      remoteFinal = message;
      applyRemoteFinal();
    };
    // A resumed turn (coming back, a reload, another tab's) brings back the message it answers.
    const onResumeMessage = (message: UI_MESSAGE) => {
      const current = latest.current;
      if (!current.messages.some((existing) => existing.id === message.id))
        current.setMessages([...current.messages, message]);
    };
    handle.remoteTurnHandler = show;
    handle.remoteFinishHandler = onRemoteFinish;
    handle.resumeMessageHandler = onResumeMessage;
    const shownMessages = () => latest.current.messages;
    handle.shownMessagesHandler = shownMessages;
    applyPending.current = whenIdle;
    return () => {
      applyPending.current = () => {};
      if (handle.shownMessagesHandler === shownMessages) handle.shownMessagesHandler = undefined;
      if (handle.resumeMessageHandler === onResumeMessage) handle.resumeMessageHandler = undefined;
      if (handle.remoteTurnHandler === show) handle.remoteTurnHandler = undefined;
      if (handle.remoteFinishHandler === onRemoteFinish) handle.remoteFinishHandler = undefined;
    };
  }, [handle]);

  // Turns of other devices come in as remote turns, handled by `show` above.
  const otherDevices = options.otherDevices ?? false;
  const latestDevices = useRef(otherDevices);
  latestDevices.current = otherDevices;
  const watchDevices = otherDevices !== false;
  useEffect(() => {
    if (!watchDevices) return;
    return followOtherDevices(handle, {
      getAccessToken: (input) => {
        const current = latestDevices.current;
        if (typeof current === 'object' && current.getAccessToken !== undefined)
          return current.getAccessToken(input);
        return handle.client.tokens.get();
      },
    });
  }, [handle, watchDevices]);

  // useChat's clearError() (status error → ready) lets go of the failure: so does session.status.
  const previousStatus = useRef(chat.status);
  useEffect(() => {
    const previous = previousStatus.current;
    previousStatus.current = chat.status;
    if (previous === 'error' && chat.status === 'ready' && chat.error === undefined)
      handle.activity.clearError();
  }, [chat.status, chat.error, handle]);

  // A reply this tab made (not one it followed) ended: the other tabs take its final form.
  const ownRequest = useRef(false);
  /** `handle.followedResumes` when the request began: a resume found to follow moves it. */
  const resumesAtStart = useRef(0);
  const busy = isBusy(chat.status);
  useEffect(() => {
    if (busy) {
      if (handle.followedRequests === 0) ownRequest.current = true;
      resumesAtStart.current = handle.followedResumes;
      return;
    }
    // The rendered status can trail the request's end (@ai-sdk/react 4 renders from a snapshot).
    applyPending.current();
    if (!ownRequest.current) return;
    ownRequest.current = false;
    if (handle.followedResumes !== resumesAtStart.current) return; // it showed another tab's turn
    const last = latest.current.messages.at(-1);
    if (latest.current.status === 'ready' && last?.role === 'assistant') handle.announceFinished(last);
  }, [busy, handle]);
}
