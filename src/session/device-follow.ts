import type { UIMessage } from 'ai';
import { foundLiveTurn } from '../client/live-turn.js';
import { isDurableChatError } from '../errors/durable-chat-error.js';
import { type FollowedTurn, SessionFollower } from '../transport/session-follower.js';
import type { ChatSessionHandle } from './chat-session-handle.js';

/** How `useFollowTurns` follows turns that other devices start. */
export interface OtherDevicesOptions {
  /**
   * The token the watch reads with. Default: the chat's own session token. Pass the chat
   * route's `getWatchToken` to read with a read-only one.
   */
  getAccessToken?(input: { chatId: string }): Promise<string>;
}

/**
 * Watches the chat's `.out` for turns this page did not start (another device, a server
 * job) and hands each to the chat as a remote turn, as a turn of another tab is: `useChat`
 * resumes it and shows the reply. It starts once the chat has a session (this page sent, or
 * its record was loaded) from the cursor this page had read, and ends with `stop()`.
 */
export function followOtherDevices<UI_MESSAGE extends UIMessage>(
  handle: ChatSessionHandle<UI_MESSAGE>,
  options: OtherDevicesOptions,
): () => void {
  let follower: SessionFollower<UI_MESSAGE> | undefined;
  /** A turn seen starting, handed to the chat once the read is at the live edge and it is still live. */
  let pending: FollowedTurn | undefined;
  let stopped = false;
  let reported = false;
  const client = handle.client;
  const handOver = () => {
    const state = follower?.getState();
    if (state === undefined) return;
    if (!state.turnLive) pending = undefined;
    const turn = pending;
    if (turn === undefined || !state.caughtUp) return;
    pending = undefined;
    // This page's own send is live before its first record arrives: not a remote turn.
    const own = client.getState();
    if (own.turnLive || own.closed || handle.activity.get().phase !== 'none') return;
    if (handle.remoteTurnHandler === undefined) return;
    // The chat learns of the turn as it learns of another tab's, from the record: live, stored,
    // starting at its first record, so `resumeStream()` replays it from there.
    foundLiveTurn(client.store, { startCursor: turn.seqNum - 1, stored: true });
    handle.remoteTurnHandler({ message: undefined });
  };
  const report = () => {
    const phase = follower?.getState().phase;
    if (phase?.type !== 'failed' || stopped || reported) return;
    reported = true;
    const error = phase.error;
    if (isDurableChatError(error)) client.emit({ type: 'error', chatId: handle.chatId, error, fatal: false });
    else client.environment.warn(`following chat ${handle.chatId} on other devices failed: ${String(error)}`);
  };
  const begin = () => {
    const state = client.getState();
    if (stopped || follower !== undefined || state.closed || state.token === undefined) return;
    follower = new SessionFollower<UI_MESSAGE>({
      baseURL: handle.baseURL,
      chatId: handle.chatId,
      sessionId: state.sessionId,
      from: state.lastEventId,
      getAccessToken: options.getAccessToken ?? (() => client.tokens.get()),
      environment: client.environment,
      // Decided at the live edge: a turn of the backlog that ended there is history, not one to show.
      onTurnStart: (turn) => {
        pending = turn;
        handOver();
      },
    });
    follower.subscribe(() => {
      handOver();
      report();
    });
    follower.start();
  };
  client.ready().then(begin, () => {});
  const unsubscribe = client.store.subscribe(begin);
  return () => {
    stopped = true;
    unsubscribe();
    follower?.stop();
  };
}
