import type { ChatStatus, UIMessage } from 'ai';
import type { ChatSessionHandle } from './chat-session-handle.js';
import type { RemoteFinal, RemoteTurn } from './chat-session-options.js';
import { inServerOrder, needsServerOrder, withoutRefused, withRemoteFinal } from './follow-messages.js';

/** A change of the chat's messages, applied to the messages the chat has when it runs. */
export type MessagesUpdate<UI_MESSAGE extends UIMessage> = (messages: UI_MESSAGE[]) => UI_MESSAGE[];

/** The parts of a chat (`useChat`'s result) that showing another tab's turn needs. */
export interface FollowableChat<UI_MESSAGE extends UIMessage = UIMessage> {
  status: ChatStatus;
  error?: Error | undefined;
  messages: UI_MESSAGE[];
  /**
   * As `useChat`'s: an update function gets the chat's messages as they are now. `messages` is
   * the committed render's, older than the chat's while a write waits for its render, so every
   * change `TurnFollow` makes is an update function: a whole array built from `messages` would put
   * back what an earlier change (a reorder, another tab's final reply) just replaced.
   */
  setMessages(messages: UI_MESSAGE[] | MessagesUpdate<UI_MESSAGE>): void;
  resumeStream(): Promise<void>;
}

const isBusy = (status: ChatStatus) => status === 'submitted' || status === 'streaming';

/**
 * Shows the turns another tab starts on the same chat in an app's own chat, read-only, and
 * tells the other tabs how this tab's own replies ended: what `useFollowTurns` does, without
 * React. `chat()` returns the chat as it is now (a binding passes its newest committed one);
 * the binding calls `attach()` while it shows the chat and `observe()` whenever the chat's
 * status or error may have changed.
 *
 * One per session handle: a chat switch gets a new one, so no request of one chat is
 * announced to another's tabs.
 */
export class TurnFollow<UI_MESSAGE extends UIMessage> {
  /** A request of the chat is being shown (its resume, or a followed turn's). */
  #resuming = false;
  /** How another tab's turn ended, applied once this chat is idle and shows that turn. */
  #remoteFinal: RemoteFinal<UI_MESSAGE> | undefined;
  /** Another tab's turn, announced while this chat was busy (its own send waiting for the lock): shown once idle. */
  #pendingTurn: RemoteTurn<UI_MESSAGE> | undefined;
  #attached = false;
  /** The status `observe` saw last (`clearError` is told by a return to ready). */
  #previousStatus: ChatStatus | undefined;
  #wasBusy: boolean | undefined;
  /** The request in progress is this tab's own (no followed request was in flight when it began). */
  #ownRequest = false;
  /** `handle.followedResumes` when the request began: a resume found to follow moves it. */
  #resumesAtStart = 0;
  /**
   * `handle.turnsTakenOver` when the chat was last idle: a takeover since makes the end of the
   * turn the chat just showed this tab's (also a takeover while its resume waited for its first
   * answer, before the chat was busy).
   */
  #takeOversSeen = 0;
  /** `handle.stopsTold` when the chat was last idle: a tab that stopped the turn since tells how it ended. */
  #stopsSeen = 0;
  /** `handle.streamsEnded` when the chat was last idle. */
  #streamsSeen = 0;

  readonly #handle: ChatSessionHandle<UI_MESSAGE>;
  readonly #chat: () => FollowableChat<UI_MESSAGE>;

  constructor(handle: ChatSessionHandle<UI_MESSAGE>, chat: () => FollowableChat<UI_MESSAGE>) {
    this.#handle = handle;
    this.#chat = chat;
  }

  /** Shows other tabs' turns in the chat from now on; returns the detach. */
  attach(): () => void {
    const handle = this.#handle;
    const show = (turn: RemoteTurn<UI_MESSAGE>) => this.#show(turn);
    const onRemoteFinish = (final: RemoteFinal<UI_MESSAGE>) => {
      this.#remoteFinal = final;
      this.#applyRemoteFinal();
    };
    // A resumed turn (coming back, a reload, another tab's) brings back the message it answers.
    const onResumeMessage = (message: UI_MESSAGE) => {
      if (this.#chat().messages.some((existing) => existing.id === message.id)) return;
      this.#update((messages) =>
        messages.some((existing) => existing.id === message.id) ? messages : [...messages, message],
      );
    };
    handle.remoteTurnHandler = show;
    handle.remoteFinishHandler = onRemoteFinish;
    handle.resumeMessageHandler = onResumeMessage;
    // A replay behind the chat's transcript may continue a message it shows (see `withShownContinuation`).
    const shownMessages = () => this.#chat().messages;
    handle.shownMessagesHandler = shownMessages;
    this.#attached = true;
    return () => {
      this.#attached = false;
      if (handle.shownMessagesHandler === shownMessages) handle.shownMessagesHandler = undefined;
      if (handle.resumeMessageHandler === onResumeMessage) handle.resumeMessageHandler = undefined;
      if (handle.remoteTurnHandler === show) handle.remoteTurnHandler = undefined;
      if (handle.remoteFinishHandler === onRemoteFinish) handle.remoteFinishHandler = undefined;
    };
  }

  /**
   * The chat's status or error may have changed. Back to ready without an error (`clearError()`,
   * or a followed reply that ended after a refused send) lets go of the
   * failure in `session.status` too; a request that ends is the time to apply what waited for
   * the chat to be idle, and, when the reply was this tab's own, to tell the other tabs its
   * final form.
   */
  observe(): void {
    const handle = this.#handle;
    const current = this.#chat();
    const previous = this.#previousStatus ?? current.status;
    this.#previousStatus = current.status;
    // Also error → streaming → ready: a send refused (`TURN_IN_OTHER_TAB`) while this tab already
    // followed the other tab's turn; that resume, older than the refusal, cannot clear it itself.
    if (previous !== 'ready' && current.status === 'ready' && current.error === undefined)
      handle.activity.clearError();
    const busy = isBusy(current.status);
    if (busy === this.#wasBusy) {
      // Idle again without a busy status seen in between (a refused send's `submitted` → `error`
      // can come between two renders): what waited for the chat to be idle is applied now.
      if (!busy && this.#attached) this.#whenIdle();
      return;
    }
    this.#wasBusy = busy;
    if (busy) {
      if (handle.followedRequests === 0) this.#ownRequest = true;
      this.#resumesAtStart = handle.followedResumes;
      return;
    }
    if (this.#attached) this.#whenIdle();
    const streamed = handle.streamsEnded !== this.#streamsSeen;
    this.#streamsSeen = handle.streamsEnded;
    // A followed turn this tab took over ended here: no other tab tells how (its owner went away).
    // Only with a reply shown: a read cut off before it (the owner stopped, and tells) would
    // tell the other tabs to drop theirs. Not while a send of this tab's own is in flight: useChat
    // says `ready` as the followed read ends even then, before that send's reply; it is told
    // once the chat is idle for good, with that reply.
    const latest = this.#chat();
    const sending = handle.ownSendMessageId !== undefined;
    const tookOver =
      !sending &&
      handle.turnsTakenOver !== this.#takeOversSeen &&
      handle.stopsTold === this.#stopsSeen &&
      latest.messages.at(-1)?.role === 'assistant';
    if (!sending) {
      this.#takeOversSeen = handle.turnsTakenOver;
      this.#stopsSeen = handle.stopsTold;
    }
    if (!this.#ownRequest && !tookOver) return;
    this.#ownRequest = false;
    // No stream of the chat ended since it was last idle: a resume that found no live turn (at
    // mount) ended none. Told, the chat's last message would replace the other tabs' copy of it,
    // or, with a send made meanwhile and still on its way, end their copy of that send's turn
    // without a reply.
    if (!streamed && !tookOver) return;
    if (!tookOver && handle.followedResumes !== this.#resumesAtStart) return; // it showed another tab's turn
    // Also a stopped reply (ready, not error): the other tabs end it as this tab did.
    if (latest.status === 'ready') handle.announceFinished(latest.messages);
  }

  #show(turn: RemoteTurn<UI_MESSAGE>): void {
    const handle = this.#handle;
    const current = this.#chat();
    if (this.#resuming || isBusy(current.status)) {
      this.#pendingTurn = turn;
      return;
    }
    this.#pendingTurn = undefined;
    const { message } = turn;
    // Written only when there is something to change: every write renders the chat again.
    const adds = message !== undefined && !current.messages.some((existing) => existing.id === message.id);
    if (adds || handle.refusedMessageId !== undefined)
      this.#update((shown) => {
        // A send of this tab that lost the race to this turn was never sent: it leaves the transcript.
        const messages = withoutRefused(handle, shown);
        return message === undefined || messages.some((existing) => existing.id === message.id)
          ? messages
          : [...messages, message];
      });
    this.#resuming = true;
    // A turn this tab took over (its owner went away; or it was this page's own before a
    // reload) is this tab's to answer, as in useDurableChat; another tab's turn is followed.
    const followed = !handle.getTabState().owner;
    if (followed) handle.followedRequests += 1;
    const done = () => {
      this.#resuming = false;
      if (followed) handle.followedRequests -= 1;
      // A send of this tab that waited for this turn to end goes after it, as the server has it.
      if (needsServerOrder(handle)) this.#update((messages) => inServerOrder(handle, messages));
      this.#whenIdle();
    };
    current.resumeStream().then(done, (error: unknown) => {
      done();
      handle.client.environment.warn(`following the other tab's turn failed: ${String(error)}`);
    });
  }

  /** The chat is idle: a turn announced meanwhile is shown, a refused send leaves, a final reply applies. */
  #whenIdle(): void {
    const current = this.#chat();
    if (this.#resuming || isBusy(current.status)) return;
    if (this.#pendingTurn !== undefined) {
      this.#show(this.#pendingTurn);
      return;
    }
    if (this.#handle.refusedMessageId !== undefined)
      this.#update((messages) => withoutRefused(this.#handle, messages));
    this.#applyRemoteFinal();
  }

  /** Applies how the owner's turn ended (`withRemoteFinal`), once idle and showing that turn. */
  #applyRemoteFinal(): void {
    const current = this.#chat();
    const final = this.#remoteFinal;
    if (final === undefined || this.#resuming || isBusy(current.status)) return;
    // Not shown here yet (this tab's read of that turn is still to come): kept until it is.
    if (withRemoteFinal(this.#handle, current.messages, final) === undefined) return;
    this.#remoteFinal = undefined;
    this.#update((messages) => withRemoteFinal(this.#handle, messages, final) ?? messages);
  }

  /** Changes the chat's messages as they are when the change runs (see `FollowableChat.setMessages`). */
  #update(change: MessagesUpdate<UI_MESSAGE>): void {
    this.#chat().setMessages(change);
  }
}
