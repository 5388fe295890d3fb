import type { UIMessage } from 'ai';
import type { AppendResult } from '../client/append-request.js';
import { resolveEnvironment } from '../client/environment.js';
import { withHistoryCursor } from '../client/history-cursor.js';
import { endLiveTurn } from '../client/live-turn.js';
import type { SessionClient } from '../client/session-client.js';
import { type ChatSessionState, initialSessionState, knowsSession } from '../client/session-store.js';
import { isDurableChatError } from '../errors/durable-chat-error.js';
import { TurnInOtherTabError } from '../errors/turn-in-other-tab-error.js';
import { ValidationError } from '../errors/validation-error.js';
import { type SessionCallOptions, SessionChatTransport } from '../transport/session-chat-transport.js';
import { type ResolvedPersistence, resolvePersistence } from './browser-persistence.js';
import {
  type ChatSessionOptions,
  type RemoteFinal,
  type RemoteTurn,
  sessionIdentity,
  type TabState,
} from './chat-session-options.js';
import { DEFAULT_RENDER_THROTTLE_MS } from './delta-pacer.js';
import { GuardedTransport, type TurnGate } from './guarded-transport.js';
import { isDevelopment } from './is-development.js';
import { latestTransportOptions } from './latest-transport-options.js';
import { forgetLeftTurn, keepLeftTurnsForReload, noteLeftTurn, takeBackLeftTurn } from './left-turns.js';
import type { PacingClock } from './relay-stream.js';
import { RenderBatch } from './render-batch.js';
import { ActivityTracker } from './request-activity.js';
import { type SessionStateSource, sessionRegistry } from './session-registry.js';
import { TabCoordinator } from './tab-coordinator.js';
import { TabLife } from './tab-life.js';

/** The `throttle` option as a pacing window: the default when unset, 0 (off) when not a positive number. */
function renderWindowOf(options: ChatSessionOptions): number {
  const throttle = options.throttle ?? DEFAULT_RENDER_THROTTLE_MS;
  return Number.isFinite(throttle) && throttle > 0 ? throttle : 0;
}

/**
 * One chat's session for a UI binding (the React hooks; no React in here): the transport (created once, with callbacks read
 * through a ref), the lazily created client and the tab coordination. `attach()` is called
 * from an effect; the matching detach disposes only after a macrotask, so a StrictMode
 * unmount/remount keeps the same reader, resume and lock.
 */
export class ChatSessionHandle<UI_MESSAGE extends UIMessage = UIMessage> {
  readonly chatId: string;
  /** The service origin the session lives on (part of its identity, so fixed per handle). */
  readonly baseURL: string;
  readonly sessionTransport: SessionChatTransport<UI_MESSAGE>;
  readonly transport: GuardedTransport<UI_MESSAGE>;
  readonly persistence: ResolvedPersistence;
  #clientInstance: SessionClient | undefined;
  readonly #placeholder: ChatSessionState;
  readonly #changeListeners = new Set<() => void>();
  readonly #tabListeners = new Set<() => void>();
  #attachments = 0;
  /** Effect cleanups so far: an abort followed by one in the same tick was an unmount, not a stop. */
  #detachCount = 0;
  /** Disposed: nothing of this page reads the chat any more; its streams end silently. */
  #releasedForGood = false;
  /** What the transport is doing for this page (the `useChat` + `useChatSession` status). */
  readonly activity = new ActivityTracker();
  #disposeTimer: ReturnType<typeof setTimeout> | undefined;
  #life: TabLife<UI_MESSAGE> | undefined;
  #inFlight = 0;
  #stopRequested = false;
  #stopping: Promise<void> | undefined;
  #tabState: TabState = { mode: 'none', owner: false, following: false };
  #turnsTakenOver = 0;
  #stopsTold = 0;
  /** The assistant message a send of this tab continues (an approval or tool output answered), until another tab's turn. */
  #continuedHere: string | undefined;
  /** Set by `useDurableChat` / `useFollowTurns`: shows another tab's turn in this tab's chat. */
  remoteTurnHandler: ((turn: RemoteTurn<UI_MESSAGE>) => void) | undefined;
  /**
   * Followed requests in flight: this tab shows a turn another tab owns (a follow
   * `useFollowTurns` started, or `useChat`'s resume of a turn another tab owns). Each is
   * counted until a macrotask after its stream ended, so `useChat`'s `onFinish` and
   * `sendAutomaticallyWhen` for it still see it.
   */
  followedRequests = 0;
  /** Counts the resumes found to follow another tab's turn (a request that saw one is not this tab's). */
  followedResumes = 0;

  /** Streams that reached the chat and ended so far (sends, and resumes that found a turn): see `TurnFollow.observe`. */
  get streamsEnded(): number {
    return this.#life?.streamsEnded ?? 0;
  }
  /**
   * The user message of the last send refused with `TURN_IN_OTHER_TAB` (never sent; taken out
   * by `withoutRefused`, src/session/follow-messages.ts).
   */
  refusedMessageId: string | undefined;
  /** This tab's own send of a user message, from its start (waiting for the lock) to its turn's end. */
  ownSendMessageId: string | undefined;
  /** That send went out while the turn before it was live: no turn ended before it (see `inServerOrder`). */
  ownSendOverlapsTurn = false;
  /** The reply of the last turn of another tab a resume showed (see `inServerOrder`). */
  followedReplyId: string | undefined;
  /** Set by `useDurableChat` / `useFollowTurns`: how another tab's turn ended on its screen. */
  remoteFinishHandler: ((final: RemoteFinal<UI_MESSAGE>) => void) | undefined;
  /**
   * Set by `useDurableChat` / `useFollowTurns`: a resume of the live turn is about to reach the
   * chat, with the user message that turn answers (when known); the chat adds it if missing.
   */
  resumeMessageHandler: ((message: UI_MESSAGE) => void) | undefined;
  /** Set by `useDurableChat` / `useFollowTurns`: the messages the chat shows now. */
  shownMessagesHandler: (() => UI_MESSAGE[]) | undefined;
  /**
   * The user message of the live turn the chat's record held when it loaded. This page shows
   * that turn whatever happens next: its resume may reach the chat only after the turn ended
   * (a slow reload: the owner has moved on to the next turn, an approval's continuation), so
   * neither the resume nor the next turn brings this message or the reply back.
   */
  #foundTurnMessage: UI_MESSAGE | undefined;
  /** The session's clock (its `environment`): paces the deltas handed to `useChat`. */
  readonly #clock: PacingClock;
  /** This session's state as the React hooks read it: its changes heard once per task (`RenderBatch`). */
  readonly renderSource: SessionStateSource;
  /** `activity.subscribe` for the React hooks, heard once per task with `renderSource`. */
  readonly subscribeActivityForRender: (listener: () => void) => () => void;
  /** The `persistence` option the session was created with (an adapter is kept for the session's life). */
  readonly #persistenceOption: ChatSessionOptions['persistence'];
  #warnedAboutAdapter = false;
  /** What tells this chat's session apart (`sessionIdentity`): the key of `turnsLeftMidway`. */
  readonly identity: string;
  /** This handle's last cleanup noted its live turn in `turnsLeftMidway`. */
  #markedLeaving = false;

  /**
   * The options of the newest render that committed (`commitOptions`, from an insertion
   * effect). A render React throws away, or one a suspended transition holds back, never
   * reaches them: the chat on screen runs the options it was shown with.
   */
  #options: ChatSessionOptions;

  /** `initial`: the options of the render that created the session (it does no I/O). */
  constructor(initial: ChatSessionOptions) {
    this.#options = initial;
    this.chatId = initial.chatId;
    this.baseURL = initial.baseURL;
    this.#placeholder = initialSessionState(this.chatId);
    this.#clock = resolveEnvironment(initial.environment);
    const batch = new RenderBatch(this.#clock, () => this.activity.get().phase !== 'none');
    this.renderSource = {
      chatId: this.chatId,
      getState: () => this.getState(),
      subscribe: batch.batched((listener) => this.subscribe(listener)),
    };
    this.subscribeActivityForRender = batch.batched(this.activity.subscribe);
    this.#persistenceOption = initial.persistence;
    this.identity = sessionIdentity(initial);
    const resolved = resolvePersistence(initial.persistence ?? 'local', initial.storagePrefix, initial.scope);
    // The transcript's cursor seeds the chat's first load only (the one it mounts with).
    this.persistence =
      initial.historyCursor === undefined
        ? resolved
        : { ...resolved, adapter: withHistoryCursor(resolved.adapter, initial.historyCursor) };
    this.sessionTransport = new SessionChatTransport<UI_MESSAGE>(
      latestTransportOptions(() => this.#options, this.persistence.adapter),
    );
    this.transport = new GuardedTransport(this.sessionTransport, this.#gate());
  }

  /** The chat's client, created on first use (never during render: hydration does I/O). */
  get client(): SessionClient {
    if (this.#clientInstance === undefined) {
      this.#clientInstance = this.sessionTransport.getClient(this.chatId);
      this.#notify();
    }
    return this.#clientInstance;
  }

  getState(): ChatSessionState {
    return this.#clientInstance?.getState() ?? this.#placeholder;
  }

  subscribe(listener: () => void): () => void {
    let bound = this.client;
    let unsubscribeStore = bound.store.subscribe(listener);
    const onChange = () => {
      if (this.#clientInstance !== undefined && this.#clientInstance !== bound) {
        unsubscribeStore();
        bound = this.#clientInstance;
        unsubscribeStore = bound.store.subscribe(listener);
      }
      listener();
    };
    this.#changeListeners.add(onChange);
    return () => {
      this.#changeListeners.delete(onChange);
      unsubscribeStore();
    };
  }

  readonly getTabState = (): TabState => this.#tabState;

  readonly subscribeTab = (listener: () => void): (() => void) => {
    this.#tabListeners.add(listener);
    return () => this.#tabListeners.delete(listener);
  };

  /** A render committed: its options are the ones callbacks and requests read from now on. */
  commitOptions(options: ChatSessionOptions): void {
    this.#options = options;
    this.#notePersistence(options.persistence);
  }

  /**
   * Another render's `persistence` option. An adapter without a declared `id` that is not the
   * object the session started with (an inline adapter, new per render) cannot be told apart
   * from the first one: the session keeps the first, and says so once in development.
   */
  #notePersistence(persistence: ChatSessionOptions['persistence']): void {
    const first = this.#persistenceOption;
    if (this.#warnedAboutAdapter || typeof persistence !== 'object' || persistence === first) return;
    if (persistence.id !== undefined || !isDevelopment()) return;
    this.#warnedAboutAdapter = true;
    this.#warn(
      `chat ${this.chatId}: the persistence adapter changed between renders and has no id; the session keeps ` +
        'the first adapter. Create it once (module scope or useMemo), or give it an id ' +
        '(adapters with the same id are the same storage, another id switches sessions).',
    );
  }

  /** Called from an effect; returns the cleanup. */
  attach(): () => void {
    this.#attachments += 1;
    if (this.#disposeTimer !== undefined) {
      clearTimeout(this.#disposeTimer);
      this.#disposeTimer = undefined;
      // StrictMode's cleanup and setup back to back: the page never left.
      if (this.#markedLeaving) forgetLeftTurn(this.identity);
      this.#markedLeaving = false;
    } else if (this.#life === undefined) this.#start();
    let detached = false;
    return () => {
      if (detached) return;
      detached = true;
      this.#attachments -= 1;
      this.#detachCount += 1;
      if (this.#attachments > 0) return;
      this.#noteLeaving();
      // StrictMode runs cleanup and setup back to back: only a real unmount outlives a macrotask.
      this.#disposeTimer = setTimeout(() => {
        this.#disposeTimer = undefined;
        if (this.#attachments === 0) this.#dispose();
      }, 0);
    };
  }

  /** Stops the live turn: ends this page's stream and appends `stop` when a turn is live (also after a reload, and in a following tab). */
  async stop(): Promise<void> {
    if (this.#inFlight > 0) this.#stopRequested = true;
    await this.#stopAgent();
  }

  /**
   * Ends the stream and appends `stop` when a turn is live. The stopped turn is over for
   * this page: `turnLive` is cleared, so a remount neither resumes it nor shows "streaming".
   */
  #stopAgent(): Promise<void> {
    // One stop at a time: useChat's abort and an explicit stop() in the same tick append one record.
    this.#stopping ??= (async () => {
      try {
        const client = this.#clientInstance;
        // A trailing tab reads a turn that the record says ended: nothing is left to stop, and a
        // stop appended now would reach the next turn. Ended here first, its read only ends.
        const ended = this.#life?.currentPhase.type === 'trailing';
        if (ended && client !== undefined) endLiveTurn(client.store);
        // The owner's read (in another tab) must not take the stopped turn for a refused one.
        // A resume still waiting for its first answer shows nothing of the turn: the tab that
        // took the turn over tells how it ended then (see `stopsTold`).
        else if (client?.getState().turnLive === true)
          this.#life?.announceStop(
            this.activity.get().phase !== 'resuming',
            !knowsSession(client.getState()),
          );
        await this.sessionTransport.stop(this.chatId);
        if (client !== undefined && !ended) endLiveTurn(client.store, 'stopped');
      } finally {
        this.#stopping = undefined;
      }
    })();
    return this.#stopping;
  }

  /** Closes the session for good (the app's `closeSession`), then marks the chat closed here. */
  async close(reason?: string): Promise<void> {
    const closeSession = this.#options.closeSession;
    if (closeSession === undefined) {
      throw new ValidationError({ message: 'close() needs the closeSession option', field: 'closeSession' });
    }
    await closeSession(reason === undefined ? { chatId: this.chatId } : { chatId: this.chatId, reason });
    this.client.markClosed(reason ?? null);
  }

  preload(): Promise<void> {
    return this.sessionTransport.preload(this.chatId);
  }

  /** Fires the agent's action (owning the turn like a send); its output shows on `resumeStream()`. */
  async sendAction(action: unknown, options?: SessionCallOptions): Promise<AppendResult> {
    const gate = this.#gate();
    await gate.enter();
    try {
      const result = await this.sessionTransport.sendAction(this.chatId, action, options);
      // The action's output is a turn of its own: this tab owns it until it has streamed.
      this.#life?.holdForTurn();
      gate.announce(undefined);
      return result;
    } finally {
      gate.leave();
    }
  }

  /**
   * Live turns this tab took over from an owner that went away, so far. A turn the chat showed
   * as another tab's and that this tab took over meanwhile ended here: the other tabs end it as
   * it did (the owner that went away tells no one).
   */
  get turnsTakenOver(): number {
    return this.#turnsTakenOver;
  }

  /**
   * Stops of the live turn other tabs made so far that will tell how the turn ended (they show
   * it): a tab that took the turn over leaves the telling to them.
   */
  get stopsTold(): number {
    return this.#stopsTold;
  }

  /**
   * True when another tab's `turn-finished` tells of a turn before one this tab sent since: its
   * reply is the message a send of this tab went on to continue (a tool approval answered, a tool
   * output). News can come late (a slow tab, a takeover's read); applied, it would put the
   * message back as it was before the continuation (the approval asked again). Asked when the
   * news comes and again when it is applied (kept until the chat is idle).
   */
  isEarlierFinal(final: RemoteFinal<UI_MESSAGE>): boolean {
    return final.message !== undefined && final.message.id === this.#continuedHere;
  }

  /** Tells the other tabs how this tab's turn ended, from its transcript then (they end alike). */
  announceFinished(messages: readonly UI_MESSAGE[]): void {
    this.#life?.announceFinished(messages);
  }

  sendPendingMessage(message: UI_MESSAGE, options?: SessionCallOptions): Promise<AppendResult> {
    return this.sessionTransport.sendPendingMessage(this.chatId, message, options);
  }

  #start(): void {
    const options = this.#options;
    const client = this.client;
    const coordinator =
      options.tabs === false
        ? undefined
        : new TabCoordinator(this.chatId, options.tabs ?? {}, resolveEnvironment(options.environment));
    this.#life = new TabLife<UI_MESSAGE>({
      client,
      coordinator,
      persistence: this.persistence,
      onRemoteTurn: (turn) => {
        this.#continuedHere = undefined;
        this.remoteTurnHandler?.(turn);
      },
      onRemoteFinish: (final) => {
        if (!this.isEarlierFinal(final)) this.remoteFinishHandler?.(final);
      },
      onRemoteStop: (shown, unsent) => {
        if (shown) this.#stopsTold += 1;
        // With no stop of that tab's, the tab that drives the turn appends one behind its message.
        this.sessionTransport.noteRemoteStop(this.chatId, unsent && this.#tabState.owner);
      },
      onTakeOver: () => {
        this.#turnsTakenOver += 1;
      },
      turnMessage: () => {
        const message = this.liveTurnMessage();
        return message?.role === 'user' ? message : undefined;
      },
      hasChat: () => this.remoteTurnHandler !== undefined,
      busy: () => this.#inFlight > 0,
      resendTakenOver: (pending) => {
        this.sessionTransport
          .resendTakenOver(this.chatId, pending)
          .catch((error: unknown) => this.#warn(`could not send the taken-over message: ${String(error)}`));
      },
      onTabState: (state) => this.#setTabState(state),
      warn: client.environment.warn,
    });
    const unregister = sessionRegistry.register(this);
    this.#life.addCleanup(unregister);
    // A reload unmounts nothing: the page notes the turn it drives for the page that replaces it.
    const unloading = (event: PageTransitionEvent) => {
      if (event.persisted) return; // kept in the back-forward cache: this page comes back as it is
      this.#noteLeaving();
      keepLeftTurnsForReload((message) => this.#warn(message));
    };
    if (typeof window !== 'undefined') {
      window.addEventListener('pagehide', unloading);
      this.#life.addCleanup(() => window.removeEventListener('pagehide', unloading));
    }
    // A failed load is reported by the tab life (and by the chat's first request).
    client.ready().then(
      () => this.#noteFoundTurn(),
      () => undefined,
    );
  }

  /** The chat loaded with a live turn: its message shows at once, before any of its reply. */
  #noteFoundTurn(): void {
    const message = this.liveTurnMessage();
    if (this.#releasedForGood || message?.role !== 'user') return;
    this.#foundTurnMessage = message;
    this.resumeMessageHandler?.(message);
  }

  /**
   * The message the live turn answers (the user's, or the assistant message it continues), from
   * the record; undefined when none is known or it is unusable.
   */
  liveTurnMessage(): UI_MESSAGE | undefined {
    const { turnLive, turnMessage } = this.getState();
    if (!turnLive || turnMessage === undefined) return undefined;
    try {
      const message = JSON.parse(turnMessage) as Partial<UIMessage> | null;
      const role = message?.role;
      if (
        (role === 'user' || role === 'assistant') &&
        typeof message?.id === 'string' &&
        Array.isArray(message.parts)
      )
        return message as UI_MESSAGE;
      this.#warn(`chat ${this.chatId}: ignoring the live turn's stored message (not a chat message)`);
    } catch (error) {
      this.#warn(`chat ${this.chatId}: ignoring the live turn's stored message (${String(error)})`);
    }
    return undefined;
  }

  /** Resolves once this tab knows whether another tab owns the live turn it found at mount. */
  async whenOwnerKnown(): Promise<void> {
    await this.#life?.whenOwnerKnown();
  }

  /** The message of the live turn found at load, for `withRemoteFinal` (src/session/follow-messages.ts). */
  get foundTurnMessage(): UI_MESSAGE | undefined {
    return this.#foundTurnMessage;
  }

  /** The page lets go of the chat (the last cleanup; a remount in the same tick takes it back). */
  #noteLeaving(): void {
    const state = this.#clientInstance?.getState();
    const drove = this.#tabState.mode === 'none' || this.#tabState.owner || this.#inFlight > 0;
    // A send still on its way makes the turn live in a moment: it is this page's too.
    if (state === undefined || state.closed || !(state.turnLive || this.#inFlight > 0) || !drove) return;
    noteLeftTurn(this.identity, state.lastEventId);
    this.#markedLeaving = true;
  }

  #dispose(): void {
    this.#releasedForGood = true;
    this.#life?.dispose();
    this.#life = undefined;
    // A send still on its way (the session starting, the read to the edge, the append going
    // out) finishes first: the user sent it, and the record must say the turn is live so the
    // chat resumes it when shown again. The transport is closed when the send lets go.
    if (this.#inFlight === 0) this.sessionTransport.close();
    this.#clientInstance = undefined;
    this.#setTabState({ mode: this.#tabState.mode, owner: false, following: false });
  }

  #setTabState(state: TabState): void {
    this.#tabState = state;
    for (const listener of [...this.#tabListeners]) listener();
  }

  #gate(): TurnGate {
    return {
      chatId: this.chatId,
      activity: this.activity,
      renderWindowMs: () => renderWindowOf(this.#options),
      clock: this.#clock,
      attached: () => this.#attachments > 0,
      detaches: () => this.#detachCount,
      released: () => this.#releasedForGood,
      turnLive: async () => {
        if (this.#releasedForGood) return false;
        const { client } = this;
        await client.ready();
        const state = client.getState();
        return state.turnLive && !state.closed;
      },
      stop: () =>
        this.#stopAgent().catch((error: unknown) => {
          const client = this.#clientInstance;
          if (client !== undefined && isDurableChatError(error))
            client.emit({ type: 'error', chatId: this.chatId, error, fatal: false });
          else this.#warn(`could not stop chat ${this.chatId}: ${String(error)}`);
        }),
      enter: async () => {
        const life = this.#life;
        if (life !== undefined && !(await life.acquire())) throw new TurnInOtherTabError();
        this.#inFlight += 1;
      },
      refused: (messageId) => {
        this.refusedMessageId = messageId;
      },
      ownSend: (messageId, overlapsTurn) => {
        this.ownSendMessageId = messageId;
        this.ownSendOverlapsTurn = overlapsTurn === true;
      },
      followedReply: (messageId) => {
        this.followedReplyId = messageId;
      },
      leave: () => {
        this.#inFlight -= 1;
        this.#life?.settle();
        // The page let go of the chat while this send was on its way (see `dispose`).
        if (this.#releasedForGood && this.#inFlight === 0 && this.#attachments === 0)
          this.sessionTransport.close();
      },
      warn: (message) => this.#warn(message),
      streamOpened: () => this.#life?.streamOpened() ?? (() => {}),
      resumeStarted: () => this.#life?.resumeStarted() ?? (() => {}),
      noteTurnMessage: (message) => {
        if (message?.role === 'assistant') this.#continuedHere = message.id;
        const client = this.#clientInstance;
        const turnMessage = message === undefined ? undefined : JSON.stringify(message);
        if (client !== undefined && client.getState().turnMessage !== turnMessage)
          client.store.setState({ turnMessage });
      },
      resumesTurn: () => {
        // The turn found at load first: the live turn may be a later one by now.
        const found = this.#foundTurnMessage;
        if (found !== undefined) this.resumeMessageHandler?.(found);
        const message = this.liveTurnMessage();
        if (message?.role === 'user') this.resumeMessageHandler?.(message);
        return message?.role === 'assistant' ? message : undefined;
      },
      shownMessage: (messageId: string) =>
        this.shownMessagesHandler?.().find((message) => message.id === messageId),
      followsOtherTab: async () => {
        const life = this.#life;
        if (life === undefined) return false;
        await life.whenOwnerKnown();
        // A turn this page made and left midway (a remount, a chat switch and back) is its own to
        // answer, whichever tab drives it now: the rule of `useDurableChat`'s resume on mount
        // (which asks first, so this is for `useChat`'s own resume). Else no tab saves it: the
        // tab that took it over was following it when its read began (`isFollowingTurn()`).
        if (takeBackLeftTurn(this, (message) => this.#warn(message))) return false;
        // Also a turn this tab got the lock for only to read it to its end (see `TabPhase`).
        return life.showsOtherTabsTurn();
      },
      followResume: () => {
        this.followedRequests += 1;
        this.followedResumes += 1;
        let done = false;
        return () => {
          if (done) return;
          done = true;
          // useChat runs onFinish and sendAutomaticallyWhen after the stream ends: still followed then.
          setTimeout(() => {
            this.followedRequests -= 1;
          }, 0);
        };
      },
      announce: (message) => this.#life?.announce(message as UI_MESSAGE | undefined),
      takeStopRequest: () => {
        const requested = this.#stopRequested;
        if (this.#inFlight <= 1) this.#stopRequested = false;
        return requested;
      },
    };
  }

  #warn(message: string): void {
    (this.#clientInstance?.environment.warn ?? this.#options.environment?.warn ?? console.warn)(message);
  }

  #notify(): void {
    for (const listener of [...this.#changeListeners]) listener();
  }
}
