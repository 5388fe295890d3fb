import { Chat } from '@ai-sdk/react';
import { generateId, type UIMessage } from 'ai';
import type { AppendResult } from '../client/append-request.js';
import { foundLiveTurn } from '../client/live-turn.js';
import { ValidationError } from '../errors/validation-error.js';
import type { ChatSessionHandle } from '../session/chat-session-handle.js';
import type { RemoteFinal, RemoteTurn } from '../session/chat-session-options.js';
import { inServerOrder, withoutRefused, withRemoteFinal } from '../session/follow-messages.js';
import { takeBackLeftTurn } from '../session/left-turns.js';
import type { SessionCallOptions } from '../transport/session-chat-transport.js';

/** `Chat`'s options, taken from `@ai-sdk/react` itself (it may bundle its own copy of `ai`). */
export type ReactChatInit<UI_MESSAGE extends UIMessage> = ConstructorParameters<typeof Chat<UI_MESSAGE>>[0];

/** The hook options the controller reads (always the newest, through a ref). */
export interface ControllerOptions<UI_MESSAGE extends UIMessage>
  extends Omit<ReactChatInit<UI_MESSAGE>, 'id' | 'transport'> {
  experimental_queue?: boolean;
  pendingMessages?: 'next-turn' | 'inject';
}

const isBusy = (chat: Chat<UIMessage>) => chat.status === 'submitted' || chat.status === 'streaming';

/**
 * Everything `useDurableChat` keeps for ONE chat: its AI SDK `Chat`, whether it is
 * resuming, the steering messages queued in it, and whether the turn it shows is owned
 * by this tab. One controller per session handle, so switching `chatId` without
 * remounting never carries one chat's callbacks, queue, resume or errors into another.
 *
 * The app's callbacks run only while the hook shows this chat, and `onToolCall`,
 * `onFinish` and `sendAutomaticallyWhen` only for requests this tab made: a tab showing
 * another tab's turn never answers it (the owner does, once), even when it takes the
 * turn over because the owner went away (the owner may have answered already; the
 * user can still answer by hand).
 */
export class DurableChatController<UI_MESSAGE extends UIMessage> {
  readonly chat: Chat<UI_MESSAGE>;
  #shown = false;
  #resuming = false;
  #resumedOnMount = false;
  /** The request in flight shows a turn another tab owns. */
  #followingTurn = false;
  /** `handle.turnsTakenOver` when the last request ended (see `onFinish`). */
  #takeOversSeen = 0;
  /** `handle.stopsTold` when the last request ended: a tab that stopped the turn since tells how it ended. */
  #stopsSeen = 0;
  #queue: UI_MESSAGE[] = [];
  /** Another tab's final reply, applied once this chat is idle. */
  #remoteFinal: RemoteFinal<UI_MESSAGE> | undefined;
  /** Another tab's turn, announced while this chat was busy (its own send waiting for the lock): shown once idle. */
  #pendingTurn: RemoteTurn<UI_MESSAGE> | undefined;
  readonly #queueListeners = new Set<() => void>();

  /** The options of the newest committed render (`commitOptions`); the Chat's callbacks read them. */
  #options: ControllerOptions<UI_MESSAGE>;

  /** `initial`: the options of the render that created the controller (it does no I/O). */
  readonly #handle: ChatSessionHandle<UI_MESSAGE>;

  constructor(handle: ChatSessionHandle<UI_MESSAGE>, initial: ControllerOptions<UI_MESSAGE>) {
    this.#handle = handle;
    this.#options = initial;
    const answers = () => this.#shown && !this.#followingTurn;
    this.chat = new Chat<UI_MESSAGE>({
      id: handle.chatId,
      messages: initial.messages,
      generateId: initial.generateId,
      messageMetadataSchema: initial.messageMetadataSchema,
      dataPartSchemas: initial.dataPartSchemas,
      transport: handle.transport,
      onError: (error) => {
        if (this.#shown) this.#options.onError?.(error);
      },
      onToolCall: async (call) => {
        if (answers()) await this.#options.onToolCall?.(call);
      },
      onFinish: (event) => {
        const tookOver =
          handle.turnsTakenOver !== this.#takeOversSeen && handle.stopsTold === this.#stopsSeen;
        this.#takeOversSeen = handle.turnsTakenOver;
        this.#stopsSeen = handle.stopsTold;
        if (!answers()) {
          // This tab took over the turn it followed (its owner went away): it saw the turn's end,
          // so the other tabs end it as it does; answering it (onFinish) stays with the page that
          // sent it. Only with its reply shown last: not a read cut off before the reply (the
          // owner stopped, and tells), nor with a send of this tab's own in flight (its turn
          // tells, in its own onFinish).
          const sending = handle.ownSendMessageId !== undefined;
          if (tookOver && !sending && !event.isError && event.messages.at(-1)?.role === 'assistant')
            handle.announceFinished(event.messages);
          return;
        }
        // The followed turn a resume showed is over: a send of this tab that waited for it goes
        // after it now, so what onFinish saves is what the chat shows (see `resume`).
        if (this.#resuming) {
          const ordered = inServerOrder(handle, this.chat.messages);
          if (ordered !== this.chat.messages) {
            this.chat.messages = ordered;
            event = { ...event, messages: ordered };
          }
        }
        // A stop (shown: not an unmount or a switch) ends the reply here; the other tabs, whose
        // read may go past the stop, end it as this tab did (as useChat + useFollowTurns does).
        if (!event.isError) handle.announceFinished(event.messages);
        this.#options.onFinish?.(event);
      },
      onData: (part) => {
        if (this.#shown) this.#options.onData?.(part);
      },
      sendAutomaticallyWhen: (input) =>
        answers() ? (this.#options.sendAutomaticallyWhen?.(input) ?? false) : false,
      ...(initial.experimental_queue === undefined ? {} : { experimental_queue: initial.experimental_queue }),
    } as ReactChatInit<UI_MESSAGE>);
    if (initial.experimental_queue === true && !('experimental_queuedMessages' in this.chat)) {
      throw new ValidationError({
        message: 'experimental_queue needs ai 7 and @ai-sdk/react 4; this AI SDK has no message queue',
        field: 'experimental_queue',
      });
    }
  }

  /** A render committed: the Chat's callbacks run its options from now on (never those of a render held back). */
  commitOptions(options: ControllerOptions<UI_MESSAGE>): void {
    this.#options = options;
  }

  /** The hook shows this chat (from an effect; StrictMode's cleanup and setup run back to back). */
  show(): () => void {
    this.#shown = true;
    const onRemoteTurn = (turn: RemoteTurn<UI_MESSAGE>) => this.#follow(turn);
    const onRemoteFinish = (final: RemoteFinal<UI_MESSAGE>) => {
      this.#remoteFinal = final;
      this.#applyRemoteFinal();
    };
    // A resumed turn (coming back, a reload, another tab's) brings back the message it answers.
    const onResumeMessage = (message: UI_MESSAGE) => {
      if (!this.chat.messages.some((existing) => existing.id === message.id))
        this.chat.messages = [...this.chat.messages, message];
    };
    this.#handle.remoteTurnHandler = onRemoteTurn;
    this.#handle.remoteFinishHandler = onRemoteFinish;
    this.#handle.resumeMessageHandler = onResumeMessage;
    const shownMessages = () => this.chat.messages;
    this.#handle.shownMessagesHandler = shownMessages;
    return () => {
      this.#shown = false;
      if (this.#handle.shownMessagesHandler === shownMessages) this.#handle.shownMessagesHandler = undefined;
      if (this.#handle.resumeMessageHandler === onResumeMessage)
        this.#handle.resumeMessageHandler = undefined;
      if (this.#handle.remoteTurnHandler === onRemoteTurn) this.#handle.remoteTurnHandler = undefined;
      if (this.#handle.remoteFinishHandler === onRemoteFinish) this.#handle.remoteFinishHandler = undefined;
    };
  }

  /** Replays the live turn into the chat once (a resume in progress is not started twice). */
  resume(): void {
    if (this.#resuming) return;
    this.#resuming = true;
    const done = () => {
      this.#resuming = false;
      this.#followingTurn = false;
      // A send of this tab that waited for a followed turn to end goes after it, as the server has it.
      const ordered = inServerOrder(this.#handle, this.chat.messages);
      if (ordered !== this.chat.messages) this.chat.messages = ordered;
      this.whenIdle();
    };
    // useChat reports a failed resume through `error` / onError; anything else is unexpected.
    this.chat.resumeStream().then(done, (error: unknown) => {
      done();
      this.#handle.client.environment.warn(`resuming the stream failed: ${String(error)}`);
    });
  }

  /** On mount: resume exactly when the persisted record says a turn is live (a finished turn costs nothing). */
  async resumeOnMount(isActive: () => boolean): Promise<void> {
    const { client } = this.#handle;
    try {
      await client.ready();
      // Whether another tab owns the live turn is known only after the claim window with the lease.
      await this.#handle.whenOwnerKnown();
    } catch (error) {
      client.environment.warn(`could not load the chat's record: ${String(error)}`);
      return;
    }
    const state = this.#handle.getState();
    if (!isActive() || !state.turnLive || state.closed || this.#resumedOnMount || isBusy(this.chat as never))
      return;
    this.#resumedOnMount = true;
    // A turn another tab still owns is shown read-only, not answered; a turn this page made and
    // left midway (unmount, chat switch) is this page's to answer, however the tabs settle.
    const ownTurn = takeBackLeftTurn(this.#handle, this.#handle.client.environment.warn);
    if (!ownTurn && this.#handle.getTabState().following) this.#followingTurn = true;
    this.resume();
  }

  /** Fires an action; this tab owns its turn and shows its output. */
  async sendAction(action: unknown, options?: SessionCallOptions): Promise<AppendResult> {
    const result = await this.#handle.sendAction(action, options);
    if (!isBusy(this.chat as never)) this.resume();
    return result;
  }

  readonly pendingMessages = (): UI_MESSAGE[] => this.#queue;

  readonly subscribePending = (listener: () => void): (() => void) => {
    this.#queueListeners.add(listener);
    return () => this.#queueListeners.delete(listener);
  };

  /**
   * Steering: appended at once (the open stream is left alone), kept aside while the reply
   * streams, then moved into the transcript when it ends. In `'next-turn'` mode the agent
   * answers each in a follow-up turn, so the chat is marked live from the current cursor
   * and resumed: the follow-up is read from its first record, never missed.
   */
  async sendPendingMessage(input: string | UI_MESSAGE, options?: SessionCallOptions): Promise<AppendResult> {
    const message =
      typeof input === 'string'
        ? ({
            id: generateId(),
            role: 'user',
            parts: [{ type: 'text', text: input }],
          } as unknown as UI_MESSAGE)
        : input;
    const result = await this.#handle.sendPendingMessage(message, options);
    this.#setQueue([...this.#queue, message]);
    this.flushPending();
    return result;
  }

  /** Moves queued steering messages into the transcript once the chat is idle. */
  flushPending(): void {
    if (this.#queue.length === 0 || isBusy(this.chat as never)) return;
    const mode = this.#options.pendingMessages ?? 'next-turn';
    const taken = mode === 'inject' ? this.#queue : this.#queue.slice(0, 1);
    this.#setQueue(this.#queue.slice(taken.length));
    this.chat.messages = [...this.chat.messages, ...taken];
    if (mode === 'inject') return;
    const { client } = this.#handle;
    const state = client.getState();
    foundLiveTurn(client.store, { startCursor: state.lastEventId, stored: false });
    this.resume();
  }

  /** Another tab started a turn (or this tab took one over): show it, read-only unless this tab now owns it. */
  #follow(turn: RemoteTurn<UI_MESSAGE>): void {
    if (isBusy(this.chat as never) || this.#resuming) {
      this.#pendingTurn = turn;
      return;
    }
    this.#pendingTurn = undefined;
    const { message } = turn;
    // A send of this tab that lost the race to this turn was never sent: it leaves the transcript.
    let messages = withoutRefused(this.#handle, this.chat.messages);
    if (message !== undefined && !messages.some((existing) => existing.id === message.id))
      messages = [...messages, message];
    if (messages !== this.chat.messages) this.chat.messages = messages;
    this.#followingTurn = !this.#handle.getTabState().owner;
    this.resume();
  }

  /**
   * The chat is idle (from the hook's effect, or a resume ended): a turn another tab announced
   * meanwhile is shown, a send refused with `TURN_IN_OTHER_TAB` leaves the transcript, and
   * another tab's final reply applies.
   */
  whenIdle(): void {
    if (isBusy(this.chat as never) || this.#resuming) return;
    const pending = this.#pendingTurn;
    if (pending !== undefined) {
      this.#follow(pending);
      return;
    }
    const messages = withoutRefused(this.#handle, this.chat.messages);
    if (messages !== this.chat.messages) this.chat.messages = messages;
    this.#applyRemoteFinal();
  }

  /** Applies how the owner's turn ended (`withRemoteFinal`), once idle and showing that turn. */
  #applyRemoteFinal(): void {
    const final = this.#remoteFinal;
    if (final === undefined || isBusy(this.chat as never) || this.#resuming) return;
    const messages = withRemoteFinal(this.#handle, this.chat.messages, final);
    if (messages === undefined) return; // that turn is not shown here yet: kept until it is
    this.#remoteFinal = undefined;
    if (messages !== this.chat.messages) this.chat.messages = messages;
  }

  #setQueue(queue: UI_MESSAGE[]): void {
    this.#queue = queue;
    for (const listener of [...this.#queueListeners]) listener();
  }
}
