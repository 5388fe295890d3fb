import type { ChatTransport, UIMessage, UIMessageChunk } from 'ai';
import type { ClientEnvironment } from '../client/environment.js';
import { ValidationError } from '../errors/validation-error.js';
import type { SessionChatTransport } from '../transport/session-chat-transport.js';
import { DeltaPacer } from './delta-pacer.js';
import type { ActivityTracker, ActivityUpdate } from './request-activity.js';

type SendOptions<M extends UIMessage> = Parameters<ChatTransport<M>['sendMessages']>[0];
type ReconnectOptions<M extends UIMessage> = Parameters<ChatTransport<M>['reconnectToStream']>[0];

/** What the transport asks of the page before, during and after a turn. */
export interface TurnGate {
  /** The chat this transport is bound to. */
  readonly chatId: string;
  /** Makes this tab the turn's owner, or throws `TURN_IN_OTHER_TAB`. */
  enter(): Promise<void>;
  /** The send is over (its stream was returned, or it failed). */
  leave(): void;
  /** A stream reached the chat; `onEnd` must be called once when it is over. */
  streamOpened(): () => void;
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
  /** Stops the agent's live turn, as `session.stop()` does; never rejects (failures are reported as session events). */
  stop(): Promise<void>;
  readonly activity: ActivityTracker;
  /** The pacing window for a stream that starts now (ms); 0 hands every chunk over as it comes. */
  renderWindowMs(): number;
  readonly clock: PacingClock;
}

/** Waits one macrotask: React runs every effect cleanup of a commit before it returns. */
const nextMacrotask = (run: () => void) => setTimeout(run, 0);

/** What an abort meant, judged when it fired (the stream may be handed over later). */
interface AbortWatch {
  /** Undefined until the signal aborts. */
  readonly seen: { attached: boolean; detaches: number } | undefined;
}

/** Notes, at the moment `signal` aborts, whether a component still held the chat. */
function watchAbort(signal: AbortSignal | undefined, gate: TurnGate): AbortWatch {
  const watch: { seen: AbortWatch['seen'] } = { seen: undefined };
  const note = () => {
    watch.seen = { attached: gate.attached() && !gate.released(), detaches: gate.detaches() };
  };
  if (signal?.aborted === true) note();
  else signal?.addEventListener('abort', note, { once: true });
  return watch;
}

/** The clock the pacing reads (the session's `environment`, so tests inject it). */
export type PacingClock = Pick<ClientEnvironment, 'now' | 'setTimeout' | 'clearTimeout'>;

const DUE = Symbol('due');

/**
 * Forwards a stream to `useChat` and decides what an abort means. An abort while a
 * component still holds the chat, not followed by a cleanup in the same tick, is the
 * user's stop: the stream ends now and the agent is stopped. An abort from a cleanup
 * (unmount, chat switch, StrictMode; `@ai-sdk/react` 4 stops its chat on cleanup) only
 * disconnects. Once the session is released, the stream neither ends nor errors: the chat
 * that was left hears nothing (no `onError`, no `onFinish`), and the reply resumes when
 * the chat is shown again.
 *
 * Text and reasoning deltas are paced (see `DeltaPacer`): a held delta is handed over
 * before the stream ends or errors, so the chat shows every chunk that reached the page.
 * On the user's stop it is handed over too, but `useChat` applies nothing after its
 * abort: what was held then (at most one window of text) is not shown. A chat that was
 * left drops it.
 */
function relay(
  source: ReadableStream<UIMessageChunk>,
  signal: AbortSignal | undefined,
  watch: AbortWatch,
  gate: TurnGate,
  update: ActivityUpdate,
  onEnd: () => void,
): ReadableStream<UIMessageChunk> {
  const reader = source.getReader();
  const { clock } = gate;
  const pacer = new DeltaPacer(gate.renderWindowMs());
  let ended = false;
  let parked = false;
  let controllerRef: ReadableStreamDefaultController<UIMessageChunk> | undefined;
  /** A read not yet answered: pacing may hand over a held delta while it waits. */
  let reading: Promise<ReadableStreamReadResult<UIMessageChunk>> | undefined;
  /** A read failure met while a delta was held: raised on the next pull, after the delta is read. */
  let failedRead: { error: unknown } | undefined;
  const end = () => {
    if (ended) return;
    ended = true;
    signal?.removeEventListener('abort', onAbort);
    onEnd();
  };
  const letGo = () => reader.cancel().catch(() => undefined);
  const park = () => {
    if (ended) return;
    parked = true;
    pacer.drop();
    end();
    update('none');
    void letGo();
  };
  const handOver = (
    controller: ReadableStreamDefaultController<UIMessageChunk>,
    chunks: UIMessageChunk[],
  ) => {
    for (const chunk of chunks) controller.enqueue(chunk);
  };
  const onAbort = () => {
    if (ended) return;
    const seen = watch.seen ?? { attached: gate.attached() && !gate.released(), detaches: gate.detaches() };
    if (!seen.attached) {
      park();
      return;
    }
    end();
    update('none');
    if (controllerRef !== undefined) {
      handOver(controllerRef, pacer.take(clock.now()));
      controllerRef.close();
    }
    nextMacrotask(() => {
      if (gate.detaches() !== seen.detaches || gate.released()) {
        void letGo();
        return;
      }
      void gate.stop().finally(letGo);
    });
  };
  /** The pending read, or DUE when the held delta's window ends first. */
  const readOrDue = (read: Promise<ReadableStreamReadResult<UIMessageChunk>>) => {
    const due = pacer.due();
    if (due === undefined) return read;
    return new Promise<ReadableStreamReadResult<UIMessageChunk> | typeof DUE>((resolve, reject) => {
      const timer = clock.setTimeout(() => resolve(DUE), Math.max(0, due - clock.now()));
      read.then(
        (result) => {
          clock.clearTimeout(timer);
          resolve(result);
        },
        (error: unknown) => {
          clock.clearTimeout(timer);
          reject(error);
        },
      );
    });
  };
  const fail = (controller: ReadableStreamDefaultController<UIMessageChunk>, error: unknown) => {
    if (gate.released()) {
      park();
      return new Promise<void>(() => {});
    }
    end();
    update('none', error instanceof Error ? error : undefined);
    controller.error(error);
    return undefined;
  };
  let first = true;
  let failure: Error | undefined;
  return new ReadableStream<UIMessageChunk>({
    start(controller) {
      controllerRef = controller;
      if (signal?.aborted === true) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
    },
    async pull(controller) {
      if (parked) return new Promise<void>(() => {});
      if (ended) return;
      if (failedRead !== undefined) return fail(controller, failedRead.error);
      for (;;) {
        reading ??= reader.read();
        let result: ReadableStreamReadResult<UIMessageChunk> | typeof DUE;
        try {
          result = await readOrDue(reading);
        } catch (error) {
          reading = undefined;
          if (ended) return;
          const held = pacer.take(clock.now());
          if (held.length === 0 || gate.released()) return fail(controller, error);
          // Erroring the stream would discard the queued delta: the next pull raises it.
          failedRead = { error };
          handOver(controller, held);
          return;
        }
        if (ended) return parked ? new Promise<void>(() => {}) : undefined;
        if (result === DUE) {
          handOver(controller, pacer.take(clock.now()));
          return;
        }
        reading = undefined;
        const { done, value } = result;
        if (done) {
          handOver(controller, pacer.take(clock.now()));
          end();
          update('none', failure);
          controller.close();
          return;
        }
        if (first) {
          first = false;
          update('receiving');
        }
        // useChat fails the request on an `error` chunk; the status says so too.
        if (value.type === 'error') failure = new Error(value.errorText);
        const out = pacer.offer(value, clock.now());
        if (out.length > 0) {
          handOver(controller, out);
          return;
        }
      }
    },
    cancel(reason) {
      // useChat cancels the stream itself when it meets an `error` chunk: that request failed.
      const failed = !ended && failure !== undefined;
      pacer.drop();
      end();
      if (failed) update('none', failure);
      return reader.cancel(reason);
    },
  });
}

/** A stream that never ends: what a chat the page has let go of receives. */
function parkedStream(): ReadableStream<UIMessageChunk> {
  return new ReadableStream<UIMessageChunk>({ pull: () => new Promise<void>(() => {}) });
}

/**
 * The `ChatTransport` `useChatSession` hands to `useChat`: the session transport bound to
 * one chat id, plus tab ownership (a tab that does not own the live turn cannot start
 * one) and aborts that tell the user's stop from an unmount (see `relay`).
 */
export class GuardedTransport<UI_MESSAGE extends UIMessage = UIMessage> implements ChatTransport<UI_MESSAGE> {
  readonly resumeStreamIsReplay = true;

  constructor(
    private readonly inner: SessionChatTransport<UI_MESSAGE>,
    private readonly gate: TurnGate,
  ) {}

  async sendMessages(options: SendOptions<UI_MESSAGE>): Promise<ReadableStream<UIMessageChunk>> {
    this.checkChatId(options.chatId);
    const watch = watchAbort(options.abortSignal, this.gate);
    const update = this.gate.activity.begin('sending');
    try {
      await this.gate.enter();
    } catch (error) {
      update('none', error instanceof Error ? error : undefined);
      throw error;
    }
    try {
      const stream = await this.inner.sendMessages({ ...options, abortSignal: undefined });
      update('appended');
      const last = options.messages.at(-1);
      this.gate.announce(options.trigger === 'submit-message' && last?.role === 'user' ? last : undefined);
      if (this.gate.takeStopRequest()) await this.gate.stop();
      return relay(stream, options.abortSignal, watch, this.gate, update, this.gate.streamOpened());
    } catch (error) {
      if (this.gate.released()) return parkedStream();
      update('none', error instanceof Error ? error : undefined);
      throw error;
    } finally {
      this.gate.leave();
    }
  }

  async reconnectToStream(
    options: ReconnectOptions<UI_MESSAGE>,
  ): Promise<ReadableStream<UIMessageChunk> | null> {
    this.checkChatId(options.chatId);
    const watch = watchAbort(options.abortSignal, this.gate);
    // Exactly when the record says a turn is live: a finished turn costs no request at all.
    if (!(await this.gate.turnLive())) return null;
    const update = this.gate.activity.begin('resuming');
    try {
      const stream = await this.inner.reconnectToStream({ ...options, abortSignal: undefined });
      if (stream === null) {
        update('none');
        return null;
      }
      return relay(stream, options.abortSignal, watch, this.gate, update, this.gate.streamOpened());
    } catch (error) {
      if (this.gate.released()) return parkedStream();
      update('none', error instanceof Error ? error : undefined);
      throw error;
    }
  }

  /** `useChat` without `id: session.id` makes up its own chat id: refuse it loudly rather than drive another session. */
  private checkChatId(chatId: string): void {
    if (chatId === this.gate.chatId) return;
    throw new ValidationError({
      message:
        `this transport belongs to chat "${this.gate.chatId}" but was called for chat "${chatId}": ` +
        'pass the same id to useChat, e.g. useChat({ id: session.id, transport: session.transport, resume: true })',
      field: 'chatId',
    });
  }
}
