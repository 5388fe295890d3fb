import type { UIMessage } from 'ai';
import { useEffect, useInsertionEffect, useMemo, useRef } from 'react';
import { followOtherDevices, type OtherDevicesOptions } from '../session/device-follow.js';
import { type FollowableChat, TurnFollow } from '../session/turn-follow.js';
import type { UseChatSessionResult } from './use-chat-session.js';
import { sessionHandleOf } from './use-chat-session.js';

export type { FollowableChat } from '../session/turn-follow.js';

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
 *
 * The work is `TurnFollow`'s (src/session, no React); this hook gives it the committed
 * render's chat and tells it when the chat's status changed.
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
  const follow = useMemo(() => new TurnFollow<UI_MESSAGE>(handle, () => latest.current), [handle]);
  useEffect(() => follow.attach(), [follow]);

  // Turns of other devices come in as remote turns, shown by `follow`.
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

  // biome-ignore lint/correctness/useExhaustiveDependencies: re-run when the chat's status or error changes.
  useEffect(() => follow.observe(), [follow, chat.status, chat.error]);
}
