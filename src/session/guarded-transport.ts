import type { ChatTransport, UIMessage, UIMessageChunk } from 'ai';
import { TurnInOtherTabError } from '../errors/turn-in-other-tab-error.js';
import { ValidationError } from '../errors/validation-error.js';
import type { SessionChatTransport } from '../transport/session-chat-transport.js';
import { chunksRebuilding, prefixedStream, withShownContinuation } from './rebuild-message.js';
import {
  type AbortWatch,
  type PacingClock,
  parkedStream,
  relay,
  stopBeforeStream,
  watchAbort,
} from './relay-stream.js';
import type { ActivityTracker } from './request-activity.js';

type SendOptions<M extends UIMessage> = Parameters<ChatTransport<M>['sendMessages']>[0];
type ReconnectOptions<M extends UIMessage> = Parameters<ChatTransport<M>['reconnectToStream']>[0];

/** What the transport asks of the page before, during and after a turn. */
export interface TurnGate {
  /** The chat this transport is bound to. */
  readonly chatId: string;
  /** Makes this tab the turn's owner, or throws `TURN_IN_OTHER_TAB`. */
  enter(): Promise<void>;
  /** A send was refused because another tab drives the turn: the id of the message it did not send. */
  refused(messageId: string): void;
  /**
   * This tab's send of a user message begins (`messageId`), or its turn is over (undefined): while
   * it waits for the lock, another tab's turn it follows goes before it (see `inServerOrder`).
   */
  ownSend(messageId: string | undefined, overlapsTurn?: boolean): void;
  /** A resume that shows another tab's turn shows its reply under this id (see `inServerOrder`). */
  followedReply(messageId: string): void;
  /** The send is over (its stream was returned, or it failed). */
  leave(): void;
  /** A stream reached the chat; `onEnd` must be called once when it is over. */
  streamOpened(): () => void;
  /** A resume was asked for; the returned function must be called once its request is over. */
  resumeStarted(): () => void;
  /**
   * The message the turn this send starts answers: the user's, or the assistant message it
   * continues (a tool output, an approval); undefined for none (a regenerate).
   */
  noteTurnMessage(message: UIMessage | undefined): void;
  /**
   * A resume of the live turn reaches the chat: the chat brings back the user message it
   * answers; returns the assistant message the turn continues, if it does.
   */
  resumesTurn(): UIMessage | undefined;
  /** The message with this id the chat shows now, if any (a replay may continue it). */
  shownMessage(messageId: string): UIMessage | undefined;
  /** True when the live turn a resume shows belongs to another tab (waits until that is known). */
  followsOtherTab(): Promise<boolean>;
  /** A resume shows another tab's turn (`isFollowingTurn()`); the returned function ends it. */
  followResume(): () => void;
  /** The turn was stored: tell the other tabs (with the user's message, when there is one). */
  announce(message: UIMessage | undefined): void;
  /** True (once) when `stop()` was called while this send was still in flight. */
  takeStopRequest(): boolean;
  /** A component still shows this chat (an effect holds the session). */
  attached(): boolean;
  /** How often the page has let go of the chat (effect cleanups): a change tells an unmount from a stop. */
  detaches(): number;
  /** The session was released for good (unmount, chat switch): its streams end silently. */
  released(): boolean;
  /** The chat's record (loaded first) says a turn is live. */
  turnLive(): Promise<boolean>;
  /** Reports what cannot be thrown to anyone (the environment's `warn`). */
  warn(message: string): void;
  /** Stops the agent's live turn, as `session.stop()` does; never rejects (failures are reported as session events). */
  stop(): Promise<void>;
  readonly activity: ActivityTracker;
  /** The pacing window for a stream that starts now (ms); 0 hands every chunk over as it comes. */
  renderWindowMs(): number;
  readonly clock: PacingClock;
}

/**
 * The `ChatTransport` `useChatSession` hands to `useChat`: the session transport bound to
 * one chat id, plus tab ownership (a tab that does not own the live turn cannot start
 * one) and aborts that tell the user's stop from an unmount (see `relay`).
 */
export class GuardedTransport<UI_MESSAGE extends UIMessage = UIMessage> implements ChatTransport<UI_MESSAGE> {
  readonly resumeStreamIsReplay = true;
  /** The abort watch of the latest resume: a newer resume marks it superseded. */
  #resumeWatch: AbortWatch | undefined;
  /** The abort watches of the streams this transport hands out that have not ended. */
  readonly #openWatches = new Set<AbortWatch>();

  readonly #inner: SessionChatTransport<UI_MESSAGE>;
  readonly #gate: TurnGate;

  constructor(inner: SessionChatTransport<UI_MESSAGE>, gate: TurnGate) {
    this.#inner = inner;
    this.#gate = gate;
  }

  async sendMessages(options: SendOptions<UI_MESSAGE>): Promise<ReadableStream<UIMessageChunk>> {
    this.#checkChatId(options.chatId);
    const watch = watchAbort(options.abortSignal, this.#gate);
    const update = this.#gate.activity.begin('sending');
    const sent = options.messages.at(-1);
    const ownMessageId = options.trigger === 'submit-message' && sent?.role === 'user' ? sent.id : undefined;
    if (ownMessageId !== undefined) this.#gate.ownSend(ownMessageId);
    const ownOver = () => {
      if (ownMessageId !== undefined) this.#gate.ownSend(undefined);
    };
    const turnMessage = options.trigger === 'submit-message' ? options.messages.at(-1) : undefined;
    // Until the send reaches the transport, a page leaving (a reload, the tab closed) notes it there.
    const leaving = this.#inner.noteIfLeaving(options, () => this.#gate.noteTurnMessage(turnMessage));
    try {
      await this.#gate.enter();
      // Sent while the turn it would wait for is still live (the owner sends again, a reload's
      // resume not answered yet): it goes out now, so the chat's order is the server's already.
      if (ownMessageId !== undefined && (await this.#gate.turnLive())) this.#gate.ownSend(ownMessageId, true);
    } catch (error) {
      leaving();
      ownOver();
      update('none', error instanceof Error ? error : undefined);
      // Another tab drives the turn: this message was never sent (the chat takes it out).
      const last = options.messages.at(-1);
      if (
        error instanceof TurnInOtherTabError &&
        options.trigger === 'submit-message' &&
        last?.role === 'user'
      )
        this.#gate.refused(last.id);
      throw error;
    }
    try {
      const last = options.messages.at(-1);
      // Kept in the record while the turn is live: whoever shows the turn again shows its message.
      // (An assistant message: the turn continues it, e.g. a tool output or an approval answered.)
      this.#gate.noteTurnMessage(turnMessage);
      leaving(); // the transport notes it from here
      const stream = await this.#inner.sendMessages({ ...options, abortSignal: undefined });
      if (this.#gate.released()) {
        // The page let go of the chat while the message was on its way: the message went out
        // (the record says the turn is live), so only this page's reader is let go; the reply
        // resumes when the chat is shown again. The chat that was left hears nothing.
        update('none');
        stream
          .cancel()
          .catch((error: unknown) => this.#gate.warn(`could not let go of the stream: ${String(error)}`));
        return parkedStream();
      }
      update('appended');
      this.#gate.announce(options.trigger === 'submit-message' && last?.role === 'user' ? last : undefined);
      if (this.#gate.takeStopRequest()) await this.#gate.stop();
      const onEnd = this.#opened(watch);
      return relay(stream, options.abortSignal, watch, this.#gate, update, () => {
        onEnd();
        ownOver();
      });
    } catch (error) {
      leaving();
      ownOver();
      if (this.#gate.released()) return parkedStream();
      update('none', error instanceof Error ? error : undefined);
      throw error;
    } finally {
      this.#gate.leave();
    }
  }

  async reconnectToStream(
    options: ReconnectOptions<UI_MESSAGE>,
  ): Promise<ReadableStream<UIMessageChunk> | null> {
    this.#checkChatId(options.chatId);
    const watch = watchAbort(options.abortSignal, this.#gate);
    // useChat aborts the resume in flight right before it starts this one: not the user's stop.
    const previous = this.#resumeWatch;
    if (previous?.seen !== undefined) previous.superseded = true;
    this.#resumeWatch = watch;
    const requested = this.#gate.resumeStarted();
    try {
      return await this.#resume(options, watch);
    } finally {
      requested();
    }
  }

  async #resume(
    options: ReconnectOptions<UI_MESSAGE>,
    watch: AbortWatch,
  ): Promise<ReadableStream<UIMessageChunk> | null> {
    // Exactly when the record says a turn is live: a finished turn costs no request at all.
    if (!(await this.#gate.turnLive())) return null;
    const update = this.#gate.activity.begin('resuming');
    try {
      // Known before the read starts (at once with Web Locks, after the claim window with the
      // lease): a turn another tab still drives is only read here, its unanswered append is
      // that tab's to send (a reload found it in the shared record).
      const following = await this.#gate.followsOtherTab();
      // The session transport lets go of the chat's stream it reads now for this one (one reader
      // per chat). That stream's chat is not the one this resume shows: a second `Chat` for this
      // chat (`@ai-sdk/react` 3 makes one when a render held back by a suspended transition
      // switched its chat and a render on the shown chat came first). It hears nothing, as a chat
      // that was left: an error would reach the app's `onError` from a chat switch.
      for (const open of this.#openWatches) if (open !== watch) open.superseded = true;
      const streamed = stopBeforeStream(options.abortSignal, watch, this.#gate);
      const stream = await this.#inner
        .reconnectToStream({ ...options, abortSignal: undefined, resendPending: !following })
        .finally(streamed);
      if (stream === null) {
        update('none');
        return null;
      }
      // useChat({ resume: true }) in a tab that opened while another tab's turn streams: the
      // resume shows that turn, so `isFollowingTurn()` is true for its callbacks.
      const followed = following ? this.#gate.followResume() : undefined;
      // Before useChat takes the stream: the reply lands after the message it answers.
      const continued = this.#gate.resumesTurn();
      // A replay of a continuation refers to the continued message's tool calls: rebuild it first.
      const replay =
        continued === undefined
          ? withShownContinuation(stream, (messageId) => this.#gate.shownMessage(messageId))
          : prefixedStream(chunksRebuilding(continued), stream);
      const onEnd = this.#opened(watch);
      const shown =
        followed === undefined ? replay : noteReplyId(replay, (id) => this.#gate.followedReply(id));
      return relay(shown, options.abortSignal, watch, this.#gate, update, () => {
        onEnd();
        followed?.();
      });
    } catch (error) {
      if (this.#gate.released()) return parkedStream();
      update('none', error instanceof Error ? error : undefined);
      throw error;
    }
  }

  /** A stream goes to the chat: `streamOpened`, and its watch is open until the returned function runs. */
  #opened(watch: AbortWatch): () => void {
    const onEnd = this.#gate.streamOpened();
    this.#openWatches.add(watch);
    return () => {
      this.#openWatches.delete(watch);
      onEnd();
    };
  }

  /** `useChat` without `id: session.id` makes up its own chat id: refuse it loudly rather than drive another session. */
  #checkChatId(chatId: string): void {
    if (chatId === this.#gate.chatId) return;
    throw new ValidationError({
      message:
        `this transport belongs to chat "${this.#gate.chatId}", not "${chatId}": give useChat the same id, ` +
        'e.g. useChat({ id: session.id, transport: session.transport, resume: true })',
      field: 'chatId',
    });
  }
}

/** The stream as is; `onReplyId` hears the id of the reply it shows (its `start` chunk's). */
function noteReplyId(
  stream: ReadableStream<UIMessageChunk>,
  onReplyId: (messageId: string) => void,
): ReadableStream<UIMessageChunk> {
  return stream.pipeThrough(
    new TransformStream<UIMessageChunk, UIMessageChunk>({
      transform(chunk, controller) {
        if (chunk.type === 'start' && chunk.messageId !== undefined) onReplyId(chunk.messageId);
        controller.enqueue(chunk);
      },
    }),
  );
}
