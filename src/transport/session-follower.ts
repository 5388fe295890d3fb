import type { UIMessage, UIMessageChunk } from 'ai';
import { createStore, type StoreApi } from 'zustand/vanilla';
import { type ClientEnvironment, sleep } from '../client/environment.js';
import type { SessionEventHandler } from '../client/events.js';
import type { HeadersOption } from '../client/http.js';
import { backoffDelay, type RetryOptions, resolveRetryOptions } from '../client/retry-policy.js';
import { SessionClient } from '../client/session-client.js';
import type { ConnectionStatus } from '../client/session-store.js';
import { type DurableChatError, isDurableChatError } from '../errors/durable-chat-error.js';
import { type ClassifiedRecord, isTurnComplete } from '../protocol/records.js';
import { createMessageBuilder, type MessageBuilder } from './message-builder.js';
import { SubagentMessages } from './subagent-messages.js';

export interface SessionFollowerOptions<UI_MESSAGE extends UIMessage = UIMessage> {
  /** The service (or dev server) origin. */
  baseURL: string;
  chatId: string;
  /**
   * A token that may read the chat's `.out`: a read-only watch token (the chat route's
   * `watch` action, `createRouteSessionCallbacks(...).getWatchToken`) or a session token.
   * Called at start, ahead of expiry and after a 401/403.
   */
  getAccessToken(input: { chatId: string }): Promise<string>;
  /** The friendly `session_*` id when known; the chat id addresses the session otherwise. */
  sessionId?: string;
  /**
   * The transcript so far, from the app's own store. Turns read from `.out` add their
   * assistant message, or rebuild and replace the one with the same id, so loading history
   * and then following shows nothing twice. Give `from` too when you know the cursor the
   * transcript includes: a reply continued after a tool output whose first turn is no longer
   * on `.out` then keeps its earlier parts.
   */
  messages?: UI_MESSAGE[];
  /**
   * The last `.out` `seq_num` the `messages` include. Default: none, so the follower reads
   * `.out` from its first record (about the last turn or two: the live one from its start).
   */
  from?: number;
  headers?: HeadersOption;
  fetch?: typeof globalThis.fetch;
  /** `.out` reconnects, and the pause before re-arming after they ran out (see `RetryOptions`). */
  retry?: RetryOptions;
  /** `Timeout-Seconds` of each `.out` long-poll (1-600). Default 60. */
  streamTimeoutSeconds?: number;
  onEvent?: SessionEventHandler;
  environment?: Partial<ClientEnvironment>;
  /** A turn began on `.out` (whoever started it); `seqNum` is its first record. */
  onTurnStart?(turn: FollowedTurn): void;
  /** Every chunk of a followed turn, in order (the transient ones too). */
  onChunk?(chunk: UIMessageChunk, turn: FollowedTurn): void;
  /** A followed turn ended (its turn-complete); `message` is its final form. */
  onTurnEnd?(message: UI_MESSAGE | undefined, turn: FollowedTurn): void;
}

/** One turn seen on `.out`. */
export interface FollowedTurn {
  /** The `messageId` of its `start` chunk. */
  messageId: string;
  /** `seq_num` of its first record. */
  seqNum: number;
}

/**
 * The follower's lifecycle. Transitions (anything else is ignored):
 *
 * | from                  | event                                   | to        |
 * |-----------------------|-----------------------------------------|-----------|
 * | idle                  | `start()`                               | following |
 * | following             | the read failed, retryable (drops that  | retrying  |
 * |                       | outlasted the reconnects, no session)   |           |
 * | retrying              | the pause ended                         | following |
 * | following / retrying  | `stop()`                                | stopped   |
 * | following / retrying  | the session is closed (409)             | closed    |
 * | following             | a final refusal (403 after a refresh)   | failed    |
 *
 * Leaving `following` ends its read; leaving `retrying` cancels its pause.
 */
export type FollowerPhase =
  | { type: 'idle' }
  | { type: 'following' }
  | { type: 'retrying'; attempt: number; retryAt: number; error: DurableChatError }
  | { type: 'stopped' }
  | { type: 'closed' }
  | { type: 'failed'; error: unknown };

export interface FollowerState<UI_MESSAGE extends UIMessage = UIMessage> {
  phase: FollowerPhase;
  /** The transcript: the `messages` given, then each turn's assistant message as it streams. */
  messages: UI_MESSAGE[];
  /** A turn is streaming on `.out` now. */
  turnLive: boolean;
  /** The `.out` connection, as the reader reports it. */
  connection: ConnectionStatus;
  /** Last `seq_num` read. */
  cursor: number | undefined;
  /** The read has reached `.out`'s live edge (false while it reads the backlog or reconnects). */
  caughtUp: boolean;
}

interface LiveTurn<UI_MESSAGE extends UIMessage> {
  turn: FollowedTurn;
  /** Undefined for a turn joined after its `start` (its beginning was trimmed): skipped. */
  builder: MessageBuilder<UI_MESSAGE> | undefined;
}

/**
 * A read-only follower of one chat, framework-free: a standing `.out` subscription across
 * turns (never a settled-peek, so it waits through idle time), which rebuilds every turn's
 * assistant message with the AI SDK's reducer, whoever started the turn. Drops reconnect from
 * the cursor; when reconnects run out it pauses and re-arms; tokens refresh ahead of expiry and
 * after a 401/403. It never appends: a read-only watch token is all it needs.
 *
 * ```ts
 * const follower = watchSession({ baseURL, chatId, getAccessToken: routes.getWatchToken });
 * follower.subscribe(() => render(follower.getState().messages));
 * ```
 */
export class SessionFollower<UI_MESSAGE extends UIMessage = UIMessage> {
  readonly chatId: string;
  /** The follower's own client (its store holds the token and the cursor). */
  readonly client: SessionClient;
  /** Sub-agent messages of the followed turns, from their `data-subagent` batches. */
  readonly subagents = new SubagentMessages<UI_MESSAGE>();
  private readonly store: StoreApi<FollowerState<UI_MESSAGE>>;
  private readonly retry;
  private controller: AbortController | undefined;
  private live: LiveTurn<UI_MESSAGE> | undefined;
  /** Messages this follower rebuilt from `.out`, by id (what a continuation turn adds to). */
  private readonly built = new Map<string, UI_MESSAGE>();
  private readonly unsubscribeClient: () => void;

  constructor(private readonly options: SessionFollowerOptions<UI_MESSAGE>) {
    this.chatId = options.chatId;
    this.retry = resolveRetryOptions(options.retry);
    const { getAccessToken, sessionId } = options;
    this.client = new SessionClient({
      baseURL: options.baseURL,
      chatId: options.chatId,
      taskIdentifier: '',
      // A follower never creates a session: "starting" is only getting a token to read with.
      startSession: async ({ chatId }) => {
        const publicAccessToken = await getAccessToken({ chatId });
        return sessionId === undefined ? { publicAccessToken } : { publicAccessToken, sessionId };
      },
      getAccessToken,
      headers: options.headers,
      fetch: options.fetch,
      retry: options.retry,
      streamTimeoutSeconds: options.streamTimeoutSeconds,
      onEvent: options.onEvent,
      environment: options.environment,
    });
    if (options.from !== undefined) this.client.store.setState({ lastEventId: options.from });
    this.store = createStore<FollowerState<UI_MESSAGE>>()(() => ({
      phase: { type: 'idle' },
      messages: [...(options.messages ?? [])],
      turnLive: false,
      connection: { type: 'idle' },
      cursor: options.from,
      caughtUp: false,
    }));
    this.unsubscribeClient = this.client.store.subscribe((next, previous) => {
      if (next.status !== previous.status || next.lastEventId !== previous.lastEventId)
        this.store.setState({ connection: next.status, cursor: next.lastEventId });
    });
  }

  getState = (): FollowerState<UI_MESSAGE> => this.store.getState();

  subscribe = (listener: () => void): (() => void) => this.store.subscribe(listener);

  /** Opens the standing subscription (once). */
  start(): void {
    if (this.store.getState().phase.type !== 'idle') return;
    const controller = new AbortController();
    this.controller = controller;
    this.setPhase({ type: 'following' });
    void this.loop(controller.signal);
  }

  /** Ends the subscription for good; the state keeps the transcript. */
  stop(): void {
    const phase = this.store.getState().phase.type;
    if (phase === 'stopped' || phase === 'closed' || phase === 'failed') return;
    this.setPhase({ type: 'stopped' });
    this.controller?.abort();
    this.endLiveTurn(false);
    this.unsubscribeClient();
    this.client.close();
  }

  private async loop(signal: AbortSignal): Promise<void> {
    const env = this.client.environment;
    let attempt = 0;
    while (!signal.aborted) {
      const cursorBefore = this.client.getState().lastEventId;
      try {
        await this.client.read(
          { from: this.client.getState().lastEventId, peekSettled: false, signal },
          {
            onRecord: (record) => {
              this.onRecord(record);
              return undefined;
            },
            // The records between the cursor and the first survivor are gone: so is the live turn's start.
            onTrimmed: () => this.endLiveTurn(false),
            onSessionReplaced: () => this.endLiveTurn(false),
            onTail: (caughtUp) => {
              if (caughtUp !== this.store.getState().caughtUp) this.store.setState({ caughtUp });
            },
            onConnection: (open) => {
              if (!open && this.store.getState().caughtUp) this.store.setState({ caughtUp: false });
            },
          },
        );
        return; // aborted: `stop()` set the phase
      } catch (error) {
        if (signal.aborted) return;
        // A retryable failure keeps the live turn: the next read goes on from the cursor.
        if (isDurableChatError(error) && error.code === 'SESSION_CLOSED') {
          this.endLiveTurn(false);
          this.finish({ type: 'closed' });
          return;
        }
        if (!isRetryable(error)) {
          this.endLiveTurn(false);
          this.finish({ type: 'failed', error });
          return;
        }
        // A read that brought records before failing starts the count again.
        attempt = this.client.getState().lastEventId !== cursorBefore ? 1 : attempt + 1;
        const delayMs = Math.max(
          this.retry.firstRetryDelayMs,
          backoffDelay(attempt + 1, this.retry, env.random()),
        );
        this.setPhase({ type: 'retrying', attempt, retryAt: env.now() + delayMs, error });
        try {
          await sleep(env, delayMs, signal);
        } catch {
          return;
        }
        if (signal.aborted) return;
        this.setPhase({ type: 'following' });
      }
    }
  }

  private onRecord(record: ClassifiedRecord): void {
    if (record.kind === 'data') {
      this.onChunk(record.chunk, record.seqNum);
      return;
    }
    if (isTurnComplete(record)) this.endLiveTurn(true);
  }

  private onChunk(chunk: UIMessageChunk, seqNum: number): void {
    let live = this.live;
    if (live === undefined) {
      if (chunk.type !== 'start') {
        // Joined after this turn began (its start was trimmed or read earlier): it is skipped
        // to its turn-complete rather than shown half.
        this.live = { turn: { messageId: '', seqNum }, builder: undefined };
        return;
      }
      live = this.beginTurn(chunk.messageId, seqNum);
    }
    if (live.builder === undefined) return;
    this.subagents.apply(chunk);
    live.builder.push(chunk);
    this.options.onChunk?.(chunk, live.turn);
  }

  private beginTurn(messageId: string | undefined, seqNum: number): LiveTurn<UI_MESSAGE> {
    // A turn continues a message only when this follower built that message from an earlier
    // turn (a reply continued after a tool output). A message it was given may already hold
    // this very turn (the app saved it after the turn): the turn rebuilds it and replaces it.
    const base = messageId === undefined ? undefined : this.built.get(messageId);
    const turn: FollowedTurn = { messageId: messageId ?? '', seqNum };
    const live: LiveTurn<UI_MESSAGE> = {
      turn,
      builder: createMessageBuilder<UI_MESSAGE>({
        message: base,
        onMessage: (message) => {
          this.built.set(message.id, message);
          this.upsert(message);
        },
        onError: (error) =>
          this.client.environment.warn(
            `chat ${this.chatId}: a followed turn's chunk was refused: ${String(error)}`,
          ),
      }),
    };
    this.live = live;
    this.store.setState({ turnLive: true });
    this.options.onTurnStart?.(turn);
    return live;
  }

  /** The live turn is over: `completed` at its turn-complete, else cut (a trim, a stop, a failure). */
  private endLiveTurn(completed: boolean): void {
    const live = this.live;
    this.live = undefined;
    if (this.store.getState().turnLive) this.store.setState({ turnLive: false });
    if (live?.builder === undefined) return;
    const { turn } = live;
    live.builder.end().then((message) => {
      if (completed) this.options.onTurnEnd?.(message, turn);
    });
  }

  private upsert(message: UI_MESSAGE): void {
    const messages = this.store.getState().messages;
    const index = messages.findIndex((existing) => existing.id === message.id);
    const next = [...messages];
    if (index === -1) next.push(message);
    else next[index] = message;
    this.store.setState({ messages: next });
  }

  private setPhase(phase: FollowerPhase): void {
    this.store.setState({ phase });
  }

  private finish(phase: FollowerPhase): void {
    this.setPhase(phase);
    this.unsubscribeClient();
    this.client.close();
  }
}

/**
 * Drops that outlasted the reconnects, a session not there (yet): worth another try later.
 * A 403 that a fresh token did not heal is final: the token cannot read this chat.
 */
function isRetryable(error: unknown): error is DurableChatError {
  if (!isDurableChatError(error) || error.code === 'FORBIDDEN') return false;
  return error.retryable || error.code === 'NOT_FOUND';
}

/** Creates a `SessionFollower` and starts it. */
export function watchSession<UI_MESSAGE extends UIMessage = UIMessage>(
  options: SessionFollowerOptions<UI_MESSAGE>,
): SessionFollower<UI_MESSAGE> {
  const follower = new SessionFollower<UI_MESSAGE>(options);
  follower.start();
  return follower;
}
