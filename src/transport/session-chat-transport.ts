import type { ChatRequestOptions, ChatTransport, UIMessage, UIMessageChunk } from 'ai';
import type { AppendResult } from '../client/append-request.js';
import { listenForAbort, randomPartId } from '../client/environment.js';
import { type HeadersOption, requireBaseURL } from '../client/http.js';
import { writeTurns } from '../client/live-turn.js';
import { SessionClient } from '../client/session-client.js';
import { type ChatSessionState, knowsSession } from '../client/session-store.js';
import { liveTurn, type TurnRecord } from '../client/turn-records.js';
import { isDurableChatError } from '../errors/durable-chat-error.js';
import { ValidationError } from '../errors/validation-error.js';
import {
  actionChunk,
  regenerateChunk,
  stopChunk,
  submitChunk,
  userMessageChunk,
} from '../protocol/input-chunks.js';
import type { ChatInputChunk } from '../protocol/types.js';
import { serializeAppend } from '../protocol/validate.js';
import { DeferredStop } from './deferred-stop.js';
import { HeadStart } from './head-start.js';
import { mergeMetadata, type SessionChatTransportOptions, withPayloadExtras } from './transport-options.js';
import { type AppendAnswer, type TurnEntry, TurnLedger } from './turn-ledger.js';
import { type TurnMode, type TurnOutcome, TurnStream } from './turn-stream.js';

/** Disconnected chats whose client is kept (see `evictIdle`). */
const DISCONNECTED_CHATS_KEPT = 32;

type SendOptions<UI_MESSAGE extends UIMessage> = Parameters<ChatTransport<UI_MESSAGE>['sendMessages']>[0];
type ReconnectOptions<UI_MESSAGE extends UIMessage> = Parameters<
  ChatTransport<UI_MESSAGE>['reconnectToStream']
>[0];

/**
 * `reconnectToStream`'s options, plus what a binding that coordinates tabs knows. `resendPending`:
 * false when the live turn belongs to another tab of this browser that is still there (its
 * append, found unanswered in the shared record, is that tab's to send); the resume then only
 * reads. Default true: the record is this page's own (a reload right after sending).
 */
export type ResumeOptions<UI_MESSAGE extends UIMessage> = ReconnectOptions<UI_MESSAGE> & {
  resendPending?: boolean;
};

/** Per-call options of the transport's extra methods. */
export interface SessionCallOptions {
  metadata?: unknown;
  headers?: HeadersOption;
}

interface ChatEntry {
  client: SessionClient;
  /** The one stream reading `.out` for this chat (a newer one replaces it). */
  active: TurnStream | undefined;
  /** A stop decided by an abort, sent on the next tick unless a disconnect cancels it. */
  stops: DeferredStop;
  /**
   * Earlier turns read to their own turn-complete after a newer send (never truncated).
   * Made when the first one is, as `messageIds` and `resentParts` are: most chats never need
   * them, and an empty `Set` or `Map` is 150-190 bytes a chat.
   */
  draining: Set<TurnStream> | undefined;
  /**
   * The last turn this page read to its own turn-complete: its `endCursor` is `.out`'s live
   * edge for the next send (no read needed to find it). Read when that send starts: the turn
   * may still be taking the records it read past its end.
   */
  edge: TurnStream | undefined;
  /**
   * The highest `.in` seq this page knows of (the last turn-complete's `session-in-event-id`,
   * its own appends' `seq`); `undefined` once anything made it unknowable (a server that
   * omits them, an append whose fate is unknown).
   */
  inSeq: number | undefined;
  /**
   * Steering messages and actions sent since this page's last send: the agent may answer
   * each with a turn of its own after the current one, so that turn's end is no edge.
   * `inFlight`: not answered yet; `maxSeq`: the highest `.in` seq among the answered ones
   * (`null`: one came back without a seq).
   */
  side: { count: number; inFlight: number; maxSeq: number | null };
  /**
   * The turns that went live on this page (sends, actions, queued actions), each with its
   * append's answer and its stop: a stop or an answer belongs to the turn live when it was
   * asked for, so its late arrival never ends a newer one.
   */
  ledger: TurnLedger;
  /** Message ids the chat shows → the ids a run that took over after an upgrade streamed them under. */
  messageIds: Map<string, string> | undefined;
  /** Part ids of unanswered appends this page sent again (a resume, a takeover): each once. */
  resentParts: Set<string> | undefined;
  /** A send noted as the page left before it reached the transport (see `noteIfLeaving`). */
  leftSend: { body: string; partId: string; noted: TurnEntry } | undefined;
  /** The unanswered append this page is sending again, until it is answered: a stop before it went out cancels it. */
  resending: { partId: string; abort: AbortController; answer?: Promise<AppendAnswer> } | undefined;
}

/** What a resumed turn knows of its own append (see `SessionChatTransport.ownInput`). */
interface OwnInput {
  seq: number | undefined | Promise<AppendAnswer>;
  priorSeq: number | undefined;
}

/**
 * An AI SDK `ChatTransport` over durable chat-agent sessions.
 *
 * - `sendMessages` appends only the newest message (or nothing, to regenerate) to `.in` and
 *   returns exactly that turn's chunks; the stream ends at the turn's own turn-complete.
 *   Drops are healed inside the stream; it errors only with a typed error:
 *   `TURN_REJECTED` (a submit answered with no content), `SESSION_CLOSED`, or a
 *   `STREAM_DISCONNECTED` `TypeError` when reconnecting ran out (the turn can be resumed).
 * - `reconnectToStream` resolves `null` when no turn is live, else the live turn replayed
 *   from its start (`resumeStreamIsReplay` is true).
 * - The abort signal (useChat's stop) ends the stream at once and appends `stop` if the
 *   turn is live; cancelling the stream otherwise only disconnects.
 */
export class SessionChatTransport<UI_MESSAGE extends UIMessage = UIMessage>
  implements ChatTransport<UI_MESSAGE>
{
  readonly resumeStreamIsReplay = true;
  private readonly chats = new Map<string, ChatEntry>();
  /** Chats this page disconnected, oldest first: idle ones beyond the cap are dropped. */
  readonly #disconnected = new Set<string>();
  /** The ledger entry each turn stream reads (its send, or the live turn it resumes); one table for every chat. */
  readonly #owners = new WeakMap<TurnStream, TurnEntry>();

  readonly #headStart: HeadStart | undefined;

  readonly #options: SessionChatTransportOptions;

  constructor(options: SessionChatTransportOptions) {
    requireBaseURL(options.baseURL);
    this.#options = options;
    this.#headStart = options.headStart === undefined ? undefined : new HeadStart(options.headStart);
  }

  async sendMessages(options: SendOptions<UI_MESSAGE>): Promise<ReadableStream<UIMessageChunk>> {
    const { trigger, chatId, messages, abortSignal } = options;
    const metadata = mergeMetadata(this.#options.clientData, options.metadata);
    if (this.#headStart !== undefined && trigger === 'submit-message') {
      // A new chat's first turn through the app's own route (see head-start.ts).
      const entry = this.#entry(chatId);
      const busy =
        entry.active !== undefined ||
        entry.draining !== undefined ||
        entry.client.busy ||
        entry.leftSend !== undefined;
      const headers = options.headers as Record<string, string> | Headers | undefined;
      const body = options.body;
      const reply = await this.#headStart.send({
        client: entry.client,
        busy,
        chatId,
        messages,
        metadata,
        body,
        headers,
        abortSignal,
      });
      if (reply !== undefined) return reply;
    }
    return this.#startTurn(chatId, this.#chunkOf(options), {
      trigger,
      headers: options.headers,
      abortSignal,
    });
  }

  /** The append a send makes of `options`. */
  #chunkOf(options: SendOptions<UI_MESSAGE>): ChatInputChunk<UI_MESSAGE> {
    const { trigger, chatId, messageId, messages } = options;
    const metadata = mergeMetadata(this.#options.clientData, options.metadata);
    let chunk: ChatInputChunk<UI_MESSAGE>;
    if (trigger === 'submit-message') {
      const message = messages[messages.length - 1];
      if (message === undefined)
        throw new ValidationError({ message: 'there is no message to send', field: 'messages' });
      // A reply taken over by a new run after an upgrade is known to the agent by that run's id.
      const actualId =
        message.role === 'assistant' ? this.chats.get(chatId)?.messageIds?.get(message.id) : undefined;
      chunk = submitChunk({
        chatId,
        message: actualId === undefined ? message : { ...message, id: actualId },
        metadata,
      });
    } else chunk = regenerateChunk<UI_MESSAGE>({ chatId, messageId, metadata });
    return withPayloadExtras(chunk, options.body);
  }

  /**
   * A send held back before it reaches `sendMessages` (it waits for the tab's turn): a page
   * leaving meanwhile notes it as sent, as `sendMessages` does until its append goes out, so the
   * page a reload brings, or a tab taking the turn over, sends it. Returns the unsubscribe; the
   * send that goes out after all uses the noted part id.
   */
  noteIfLeaving(options: SendOptions<UI_MESSAGE>, onNoted?: () => void): () => void {
    const entry = this.#entry(options.chatId);
    return entry.client.environment.onUnload(() => {
      let body: string;
      try {
        body = serializeAppend(this.#chunkOf(options) as ChatInputChunk);
      } catch {
        return; // refused before any request when sent: nothing to send again
      }
      const kind = options.trigger === 'submit-message' ? 'message' : 'regenerate';
      const partId = randomPartId();
      const noted = this.#noteUnsent(entry, kind, partId, body);
      if (noted === undefined) return;
      entry.leftSend = { body, partId, noted };
      onNoted?.();
    });
  }

  async reconnectToStream(
    options: ResumeOptions<UI_MESSAGE>,
  ): Promise<ReadableStream<UIMessageChunk> | null> {
    const entry = this.#entry(options.chatId);
    const { client } = entry;
    await client.ready();
    let state = client.getState();
    if (state.closed) return null;
    if (!knowsSession(state)) {
      // No session yet: nothing to resume, unless this page's first send left before the session
      // existed (see `#noteUnsent`); the session starts now (one per chat id) and it is sent.
      if (options.resendPending === false || state.pendingAppend === undefined) return null;
      await client.ensureSession();
      state = client.getState();
    }
    // The ledger's live entry: the turn to resume, where its reply starts, its append's seq.
    const live = liveTurn(state.turns);
    const knownStart = live !== undefined;
    const stored = live !== undefined && live.state !== 'sent';
    // This page's own send whose append was still unanswered when it went away: sent again under
    // its part id (stored once either way), so its reply is known to come. Not another tab's
    // (`resendPending: false`): that tab is still sending it.
    const unanswered = knownStart && !stored ? state.pendingAppend : undefined;
    const resend = options.resendPending === false ? undefined : unanswered;
    const resent = resend === undefined ? undefined : this.#resendPending(entry, resend);
    // The turn of this page's own append (or another tab's, via the shared record) is told from
    // other inputs' turns by that append's seq, as its send was; else the first turn after its
    // start cursor is taken for it.
    const own = live !== undefined ? this.#ownInput(entry, live, resent) : undefined;
    // The turn resumed is the ledger's live entry (found at start, sent, or promoted).
    const resumed = live === undefined ? undefined : entry.ledger.entry(live.id);
    const turn = this.#replace(entry, {
      client,
      from: live !== undefined ? live.startCursor : state.lastEventId,
      mode:
        own === undefined
          ? { type: 'replay', knownStart }
          : {
              type: 'send',
              trigger: 'submit-message',
              resumed: true,
              attribution: {
                edge: live?.startCursor ?? -1,
                // This turn's reply begins with its `start`: anything before it is the rest of an
                // earlier turn (one this page stopped, another input's).
                openAtCursor: true,
                earlierStarts: state.stoppedTurn === 'unstarted' ? 1 : 0,
                expectedInSeq: own.priorSeq === undefined ? undefined : own.priorSeq + 1,
              },
            },
      // A settled peek closes before a reply that has not begun yet: never for a turn whose
      // append this chat saw stored (the spec: not right after a submit), nor for another tab's
      // turn that tab is still sending (its announcement comes right after the submit). This
      // page's own append left unanswered by a reload may never have reached the server: the
      // peek tells.
      peekSettled: !(knownStart && (stored || unanswered !== undefined || options.resendPending === false)),
      startedAt: client.environment.now(),
      onCancel: () => this.#onDisconnect(entry, turn),
      onEnd: (outcome) => {
        if (resumed !== undefined) settleEntry(entry.ledger, resumed, turn, outcome);
        this.#onTurnEnd(entry, turn, outcome);
      },
      onMessageIdAlias: (shown, actual) => this.#aliasMessageId(entry, shown, actual),
    });
    if (resumed !== undefined) this.#owners.set(turn, resumed);
    turn.start();
    if (own !== undefined) this.#awaitOwnSeq(entry, turn, own.seq);
    // Aborting a resumed stream only disconnects: the AI SDK also aborts it when a newer
    // resume replaces it (StrictMode mounts twice). `stop(chatId)` stops a resumed turn.
    listenForAbort(options.abortSignal, () => this.#disconnectTurn(entry, turn));
    const settled = await turn.firstResponse;
    // Superseded by a newer reconnect (StrictMode mounts twice), or aborted. A send meanwhile
    // moved the turn to `draining`: it is still read to its end, and its reply is this resume's
    // to show (returning nothing lost it).
    const superseded = entry.active !== turn && entry.draining?.has(turn) !== true;
    if (superseded) return null;
    if (options.abortSignal?.aborted === true) {
      // Nobody will read it: a send's reply held behind it must not wait for it.
      if (entry.draining?.has(turn) === true) turn.detach();
      return null;
    }
    if (turn.finished && !knownStart) {
      turn.detach();
      return null;
    }
    // A turn this chat started but never read to its end is shown even if it ended meanwhile.
    if (knownStart) return turn.stream;
    if (!settled) return turn.stream;
    // Settled: nothing is live. The peek keeps draining in the background to move the cursor.
    turn.detach();
    return null;
  }

  /** Creates the chat's session now rather than on the first send. */
  async preload(chatId: string): Promise<void> {
    await this.#entry(chatId).client.preload();
  }

  /** Stops the chat's live turn, e.g. after a reload when this page did not start it. */
  async stop(chatId: string): Promise<void> {
    const entry = this.#entry(chatId);
    entry.stops.cancel();
    await entry.client.ready();
    const active = entry.active;
    active?.stop(true); // reported to the AI SDK as its own stop() is (isAbort)
    if (entry.draining !== undefined) for (const turn of entry.draining) turn.stop();
    entry.draining = undefined;
    entry.ledger.clearQueue(); // the user stopped: what was queued behind the live turn is not resumed
    const state = entry.client.getState();
    if (!state.turnLive || this.#dropUnsent(entry, state)) return;
    if (!entry.ledger.stopping) entry.ledger.markStopped(stoppedTurnMark(active, state));
    await this.#appendStop(entry);
  }

  /**
   * A live turn whose message never went out: its page left before the chat's session existed
   * (the record holds the message, `pendingAppend`), and the page that sends it again (a reload,
   * a tab taking the turn over) still waits for the session. Stopped now, it is not sent at all:
   * a `stop` appended now would start the session and reach the agent before the message.
   */
  #dropUnsent(entry: ChatEntry, state: ChatSessionState): boolean {
    if (knowsSession(state)) return false;
    const live = liveTurn(state.turns);
    const target = live?.state === 'sent' ? entry.ledger.entry(live.id) : undefined;
    if (target === undefined) return false;
    entry.ledger.move(target, { type: 'refused' });
    // Sent again here, it still waits for the session behind the queue: it goes nowhere now.
    if (entry.resending !== undefined && entry.resending.partId === live?.partId)
      entry.resending.abort.abort();
    return true;
  }

  /**
   * Another tab (of this browser) is stopping the chat's live turn: the turn this page reads then
   * ends on a turn-complete without content, which is that stop, not a refusal (`TURN_REJECTED`);
   * a send of this page whose append is still unanswered is stopped behind it. `unsent`: that tab
   * appends no stop (it knew of no session yet), so this page, which drives the turn, does.
   */
  noteRemoteStop(chatId: string, unsent = false): void {
    const entry = this.chats.get(chatId);
    if (entry === undefined) return;
    const state = entry.client.getState();
    // The message this page is to send (again) waits for the session: it is not sent.
    if (this.#dropUnsent(entry, state)) return;
    const active = entry.active;
    if (active === undefined || active.finished) return;
    active.noteStoppedElsewhere();
    // Appends of two tabs are not ordered: that stop may reach the agent before this page's
    // message, which would then run in full. This page's own stop goes out behind its message.
    if (active.ownAppendUnanswered || unsent) this.#sendStop(entry);
  }

  /**
   * Fires the agent's action handler. Its output streams on `.out` like a turn: the chat
   * records it as live, so `resumeStream()` (reconnectToStream) shows it.
   */
  async sendAction(chatId: string, action: unknown, options: SessionCallOptions = {}): Promise<AppendResult> {
    const entry = this.#entry(chatId);
    entry.stops.flush();
    const lastRead = entry.edge;
    entry.edge = undefined; // its output lands after the edge: the next send must read to it
    const { client, active } = entry;
    const chunk = actionChunk({
      chatId,
      action,
      metadata: mergeMetadata(this.#options.clientData, options.metadata),
    });
    await client.ready();
    const before = client.getState();
    // Live from the moment it goes out, like a send: a stop meanwhile must reach the agent.
    const { ledger } = entry;
    const goesLive = (!before.turnLive || ledger.stopping) && (active === undefined || active.finished);
    // With this page's own edge, every `.in` seq up to `entry.inSeq` was answered before it.
    const ownEdge = lastRead?.endCursor !== undefined && lastRead.endCursor === before.lastEventId;
    const turn = goesLive
      ? ledger.goLive('action', {
          startCursor: before.lastEventId,
          priorSeq: ownEdge ? entry.inSeq : undefined,
        })
      : undefined;
    let result: AppendResult;
    try {
      result = await this.#appendSideInput(entry, () => client.append(chunk, { headers: options.headers }));
    } catch (error) {
      entry.inSeq = undefined;
      if (turn !== undefined) ledger.notStored(turn, error, false);
      throw error;
    }
    this.#noteInSeq(entry, result.seq);
    if (turn === undefined) {
      ledger.queue(result.seq);
      return result;
    }
    ledger.stored(turn, result.seq);
    return result;
  }

  /** Steering: appends a user message while a turn streams, leaving the open stream alone. */
  async sendPendingMessage(
    chatId: string,
    message: UI_MESSAGE,
    options: SessionCallOptions = {},
  ): Promise<AppendResult> {
    const metadata = mergeMetadata(this.#options.clientData, options.metadata);
    const chunk = userMessageChunk({ chatId, message, metadata });
    const entry = this.#entry(chatId);
    entry.stops.flush();
    entry.edge = undefined;
    const result = await this.#appendSideInput(entry, () =>
      entry.client.append(chunk, { headers: options.headers, kind: 'pending-message' }),
    );
    this.#noteInSeq(entry, result.seq);
    return result;
  }

  getState(chatId: string): ChatSessionState {
    return this.#entry(chatId).client.getState();
  }

  /** The chat's `SessionClient` (its `store` is what the React hooks subscribe to). */
  getClient(chatId: string): SessionClient {
    return this.#entry(chatId).client;
  }

  /**
   * Disconnects this page from the chat (unmount, navigation) without stopping the agent:
   * ends the chat's stream and cancels a stop that an abort in the same tick scheduled
   * (`useChat` calls `chat.stop()` when it unmounts). Resume later with `reconnectToStream`.
   */
  disconnect(chatId: string): void {
    const entry = this.chats.get(chatId);
    if (entry === undefined) return;
    entry.stops.cancel();
    if (entry.draining !== undefined) for (const earlier of entry.draining) earlier.release();
    entry.draining = undefined;
    const turn = entry.active;
    if (turn !== undefined) this.#disconnectTurn(entry, turn);
    this.#disconnected.delete(chatId);
    this.#disconnected.add(chatId);
    this.#evictIdle();
  }

  /**
   * Keeps the per-chat map bounded: of the chats this page disconnected, only the most
   * recent `DISCONNECTED_CHATS_KEPT` keep their client; older idle ones (no reader, no
   * append in flight) are closed and forgotten. A later call for such a chat starts a new
   * client from persistence.
   */
  #evictIdle(): void {
    if (this.#disconnected.size <= DISCONNECTED_CHATS_KEPT) return;
    for (const chatId of this.#disconnected) {
      if (this.#disconnected.size <= DISCONNECTED_CHATS_KEPT) return;
      const entry = this.chats.get(chatId);
      this.#disconnected.delete(chatId);
      if (entry === undefined) continue;
      // A chat left while its reply streams keeps its client: coming back resumes the reply.
      if (entry.active !== undefined || entry.draining !== undefined || entry.client.busy) continue;
      if (entry.client.getState().turnLive) continue;
      entry.stops.cancel();
      entry.client.close();
      this.chats.delete(chatId);
    }
  }

  /** Releases every reader of every chat, as a disconnect. Sessions stay open on the server. */
  close(): void {
    for (const entry of this.chats.values()) {
      entry.stops.cancel();
      entry.active?.release();
      if (entry.draining !== undefined) for (const earlier of entry.draining) earlier.release();
      entry.client.close();
    }
    this.chats.clear();
    this.#disconnected.clear();
  }

  async #startTurn(
    chatId: string,
    chunk: ChatInputChunk<UI_MESSAGE>,
    call: {
      trigger: 'submit-message' | 'regenerate-message';
      headers: ChatRequestOptions['headers'];
      abortSignal: AbortSignal | undefined;
    },
  ): Promise<ReadableStream<UIMessageChunk>> {
    const entry = this.#entry(chatId);
    entry.stops.flush(); // a stop decided before this send goes out before it
    const { client } = entry;
    const startedAt = client.environment.now();
    const body = serializeAppend(chunk as ChatInputChunk); // PAYLOAD_TOO_LARGE before any request
    // Noted as the page left while it waited (see `noteIfLeaving`): the same append, once.
    const left = entry.leftSend?.body === body ? entry.leftSend : undefined;
    entry.leftSend = undefined;
    const partId = left?.partId ?? randomPartId();
    const kind = call.trigger === 'submit-message' ? 'message' : 'regenerate';
    // Until its append goes out, this send is known to this page only, while the app shows (and
    // often saves) the message at once. A page leaving then (a reload) notes it as sent, so the
    // page that replaces it, or a tab taking the turn over, sends it under its part id.
    let noted: TurnEntry | undefined = left?.noted;
    const leaving = client.environment.onUnload(() => {
      noted ??= this.#noteUnsent(entry, kind, partId, body);
    });
    try {
      return await this.#sendTurn(entry, chunk, call, { startedAt, body, partId, kind }, (create) => {
        leaving();
        return noted ?? create();
      });
    } finally {
      leaving();
    }
  }

  /**
   * A send the page leaves before its append went out: live from here in the shared record,
   * its append unanswered (what a reload or a takeover sends again), also before the chat's
   * session exists (the reload starts it). Not while a live turn streams (the send would wait
   * behind it).
   */
  #noteUnsent(
    entry: ChatEntry,
    kind: 'message' | 'regenerate',
    partId: string,
    body: string,
  ): TurnEntry | undefined {
    const state = entry.client.getState();
    if (state.closed || state.turnLive) return undefined;
    const noted = entry.ledger.goLive(kind, {
      partId,
      body,
      startCursor: state.lastEventId,
      priorSeq: undefined,
    });
    // A page that followed another tab's turn holds the record (see `TabLife`): written anyway.
    entry.client.saveThroughHolds();
    return noted;
  }

  async #sendTurn(
    entry: ChatEntry,
    chunk: ChatInputChunk<UI_MESSAGE>,
    call: {
      trigger: 'submit-message' | 'regenerate-message';
      headers: ChatRequestOptions['headers'];
      abortSignal: AbortSignal | undefined;
    },
    send: { startedAt: number; body: string; partId: string; kind: 'message' | 'regenerate' },
    /** The append goes out: its ledger entry (`create`d now, unless the page noted it as it left). */
    goingOut: (create: () => TurnEntry) => TurnEntry,
  ): Promise<ReadableStream<UIMessageChunk>> {
    const { client } = entry;
    const { startedAt, body, partId, kind } = send;
    // A stop while the chat's session starts (the app's route slow, or retried) settles the send
    // now, nothing appended, as a stop before the append does later on: not when the start ends.
    // The start goes on: the next send uses its session, or meets its failure by starting it again.
    const started = client.ensureSession().then(() => true);
    const aborted = new Promise<boolean>((resolve) => listenForAbort(call.abortSignal, () => resolve(false)));
    if (!(await Promise.race([started, aborted]))) return endedStream();
    const before = client.getState();
    const active = entry.active;
    // A detached reader (a settled resume still draining) is no turn: the send replaces it.
    const earlier = active?.live === true && !active.finished && !active.isDetached ? active : undefined;
    // A live turn (an action, a send from before a reload) of which this page read nothing:
    // its reply comes before ours, starting with its own `start`.
    const liveUnstarted =
      earlier === undefined &&
      before.turnLive &&
      before.turnStartCursor !== undefined &&
      before.turnStartCursor === before.lastEventId;
    // The cursor is the live edge when this page read the previous turn to its end, or when
    // this page's own start created the session and nothing was appended or read since (the
    // first send of a new chat: `.out` is empty). Otherwise (a fresh page, a stale cursor, a
    // turn never seen finishing) read to the edge first.
    // The edge from this page's own read of the last turn, or none needed (`.out` is empty).
    const ownEnd = entry.edge?.endCursor;
    const ownEdge = earlier === undefined && ownEnd !== undefined && ownEnd === before.lastEventId;
    const edgeKnown = ownEdge || (earlier === undefined && client.outKnownEmpty);
    const liveOpen = before.turnLive && !liveUnstarted && (earlier === undefined || earlier.started);
    const stopped = earlier === undefined && !edgeKnown && !before.turnLive ? before.stoppedTurn : undefined;
    // With this page's own edge and every `.in` seq since known, the append's seq tells whether
    // another device appended in between (see `SendAttribution.expectedInSeq`).
    const mode: TurnMode = {
      type: 'send',
      trigger: call.trigger,
      attribution: {
        expectedInSeq: ownEdge && entry.inSeq !== undefined ? entry.inSeq + 1 : undefined,
        edge: edgeKnown ? (before.lastEventId ?? -1) : undefined,
        openAtCursor: edgeKnown ? false : liveOpen || stopped === 'started',
        earlierStarts:
          (earlier !== undefined && !earlier.started ? 1 : 0) +
          (liveUnstarted ? 1 : 0) +
          (stopped === 'unstarted' ? 1 : 0),
      },
    };
    entry.edge = undefined;
    entry.side = { count: 0, inFlight: 0, maxSeq: -1 };
    const { ledger } = entry;
    ledger.clearQueue(); // their turns come before this send's, which reads past them
    ledger.markStopped(undefined);
    ledger.clearStoppedSends();
    // Sending while a reply streams: the earlier turn keeps its reader to its own
    // turn-complete (never truncated); this one skips its chunks.
    if (earlier !== undefined) {
      entry.draining ??= new Set();
      entry.draining.add(earlier);
    }
    /** This send's ledger entry, once its append goes out. */
    let sent: TurnEntry | undefined;
    const turn = this.#replace(
      entry,
      {
        client,
        from: before.lastEventId,
        mode,
        peekSettled: false,
        startedAt,
        onCancel: () => this.#onDisconnect(entry, turn),
        onEnd: (outcome) => {
          if (sent !== undefined) settleEntry(ledger, sent, turn, outcome);
          this.#onTurnEnd(entry, turn, outcome);
        },
        onMessageIdAlias: (shown, actual) => this.#aliasMessageId(entry, shown, actual),
      },
      earlier === undefined,
    );
    if (entry.draining !== undefined) turn.showAfter([...entry.draining]);
    // The stop path: aborting settles the send at once (also mid-retry); an attempt that
    // may have stored the message is followed by a stop. An unmount (abort, then disconnect
    // in the same tick) lets the send finish instead.
    // Dropped once the append is answered: the turn's callbacks share this scope and live to its
    // end, and a controller with its signal is about 0.75 KiB a chat for the rest of the turn.
    let appendAbort: AbortController | undefined = new AbortController();
    let attempted = false;
    let appended = false;
    listenForAbort(call.abortSignal, () => {
      if (appended) {
        this.#stopTurn(entry, turn);
        return;
      }
      turn.stop();
      entry.stops.schedule(() => {
        appendAbort?.abort();
        if (!attempted) return;
        if (!ledger.stopping) {
          ledger.markStopped(turn.started ? 'started' : 'unstarted');
          if (sent !== undefined) sent.stoppedBefore = { inSeq: inSeqBefore };
        }
        this.#sendStop(entry);
      });
    });
    // Reading starts before the append so the connection is open when the first chunk lands.
    turn.start();
    await turn.edgeKnown;
    if (turn.error !== undefined) throw turn.error;
    // Stopped (or cancelled) before the message went out: it is not sent. A mere release
    // (unmount) still sends what the user sent.
    const ended = turn.outcome;
    if (ended === 'stopped' || ended === 'cancelled') return turn.stream;
    turn.appendSent();
    // Live from the moment the append goes out: a reply can stream (and even end) before
    // the append's response arrives, and a reload meanwhile must resume it.
    // A turn whose stop is on its way is over for this page: this send is the live one now.
    const wasLive = client.getState().turnLive && !ledger.stopping;
    const inSeqBefore = entry.inSeq;
    const expected = turn.expectedInSeq;
    // Its body is kept on its entry until the append is answered (a reload sends it again).
    const own = goingOut(() =>
      wasLive
        ? // The live mark stays the earlier turn's (a resume shows that one first).
          ledger.open(kind, { partId, body })
        : ledger.goLive(kind, {
            partId,
            body,
            // Records up to the edge found before the append (earlier turns, read while locating)
            // are not this turn's: a resume starts after them.
            startCursor: laterCursor(turn.edgeCursor, before.lastEventId),
            priorSeq: expected === undefined ? undefined : expected - 1,
          }),
    );
    sent = own;
    this.#owners.set(turn, own);
    // The stream is returned now, not when the append is answered: a slow or retried append
    // never holds back a reply that is already streaming. Its failure errors the stream.
    client
      .append(chunk as ChatInputChunk, {
        headers: call.headers as HeadersOption | undefined,
        signal: appendAbort.signal,
        partId,
        onAttempt: () => {
          // A retry's answer is a backoff away: the reply streams by the edge rules meanwhile.
          if (attempted) turn.appendRetrying();
          attempted = true;
        },
      })
      .then(
        (result: AppendResult) => {
          appended = true;
          appendAbort = undefined;
          this.#noteInSeq(entry, result.seq);
          ledger.stored(own, result.seq);
          turn.appendDone(result.seq);
        },
        (error: unknown) => {
          appendAbort = undefined;
          entry.inSeq = undefined; // it may have been stored before the failure
          // Refused (4xx): never stored, so the stop its abort sent stops nothing of it, and the
          // next send must not wait for its reply.
          if (ledger.stoppedSend() === own && refusedForGood(error)) {
            ledger.markStopped(undefined);
            ledger.clearStoppedSends();
          }
          // Not stored (or nothing of it seen): the turn is not live after all.
          ledger.notStored(own, error, turn.started);
          turn.appendFailed(error);
          if (entry.active === turn) entry.active = undefined;
        },
      );
    return turn.stream;
  }

  #aliasMessageId(entry: ChatEntry, shown: string, actual: string): void {
    entry.messageIds ??= new Map();
    if (entry.messageIds.size >= 64) entry.messageIds.clear(); // only recent replies get tool responses
    entry.messageIds.set(shown, actual);
  }

  /** Bookkeeping when a turn stream ends: the live edge is known only after a clean end. */
  #onTurnEnd(entry: ChatEntry, turn: TurnStream, outcome: TurnOutcome): void {
    if (entry.draining?.delete(turn) === true && entry.draining.size === 0) entry.draining = undefined;
    if (outcome !== 'completed' && outcome !== 'rejected') return;
    const consumed = turn.completedInSeq;
    // A steering message or action this turn did not take in (by seq; unknown: assume not)
    // gets a turn of its own after this one: the next send must read to it.
    const { side } = entry;
    const sideTurnPending =
      side.count > 0 &&
      (side.inFlight > 0 || side.maxSeq === null || consumed === undefined || consumed < side.maxSeq);
    entry.inSeq = consumed === undefined ? undefined : Math.max(consumed, entry.inSeq ?? -1);
    if (entry.active === turn && !sideTurnPending) entry.edge = turn;
  }

  /**
   * This page took over a live turn from another tab that went away while the turn's append
   * was still unanswered (the shared record's `pendingAppend`): the append is sent again under
   * its part id (the server stores it once, whether or not the first attempt arrived), so the
   * message is answered rather than waited for forever. Does nothing when this chat's live turn
   * is not waiting for its append. An unanswered append this chat already holds (loaded with the
   * record) is the one sent, unless this page sent it again already (a resume of its own turn).
   */
  async resendTakenOver(chatId: string, pending: { partId: string; body: string }): Promise<void> {
    const entry = this.#entry(chatId);
    const { client } = entry;
    await client.ready();
    const state = client.getState();
    const live = liveTurn(state.turns);
    if (state.closed || live === undefined || live.state !== 'sent') return;
    const held = state.pendingAppend;
    if (held !== undefined) {
      if (entry.resentParts?.has(held.partId) !== true) await this.#resendPending(entry, held);
      return;
    }
    writeTurns(
      client.store,
      state.turns.map((record) =>
        record.id === live.id ? { ...record, partId: pending.partId, body: pending.body } : record,
      ),
    );
    await this.#resendPending(entry, pending);
  }

  /**
   * After a reload or a takeover: sends the unanswered append of the live turn again, under its
   * part id. Answered: the turn is stored. Refused outright: it never was, and the chat is not
   * live (the resumed stream ends, see `awaitOwnSeq`). Other failures are reported; the resume
   * goes on (its liveness watch bounds it). Cancelled by a stop before it went out: not reported.
   */
  #resendPending(entry: ChatEntry, pending: { partId: string; body: string }): Promise<AppendAnswer> {
    const { client, ledger } = entry;
    const { partId } = pending;
    // A takeover's resend still out when the turn's resume asks for it (or the other way round): one append.
    const inFlight = entry.resending?.partId === partId ? entry.resending.answer : undefined;
    if (inFlight !== undefined) return inFlight;
    entry.resentParts ??= new Set();
    entry.resentParts.add(partId);
    const owner = client.getState().turns.find((record) => record.partId === partId);
    const target = owner === undefined ? undefined : ledger.entry(owner.id);
    const resending: NonNullable<ChatEntry['resending']> = { partId, abort: new AbortController() };
    entry.resending = resending;
    const done = () => {
      if (entry.resending === resending) entry.resending = undefined;
    };
    resending.answer = client
      .appendBody(pending.body, 'message', { partId, signal: resending.abort.signal })
      .then(
        (result): AppendAnswer => {
          done();
          this.#noteInSeq(entry, result.seq);
          if (target !== undefined) ledger.answer(target, { ok: true, seq: result.seq });
          return { ok: true, seq: result.seq };
        },
        (error: unknown): AppendAnswer => {
          done();
          if (resending.abort.signal.aborted) return { ok: false, error };
          entry.inSeq = undefined;
          // Refused outright: it never was stored, and its turn is not live.
          if (target !== undefined && refusedForGood(error)) ledger.move(target, { type: 'refused' });
          if (isDurableChatError(error))
            client.emit({ type: 'error', chatId: client.chatId, error, fatal: false });
          else
            client.environment.warn(`could not send chat ${client.chatId}'s message again: ${String(error)}`);
          return { ok: false, error };
        },
      );
    return resending.answer;
  }

  /**
   * What a resumed turn knows of the input it answers: its append's seq (stored with the
   * record; or the answer of the append still in flight, here or resent after a reload), and
   * the seq answered before it. `undefined`: nothing (an older record, a server without
   * seqs); the resume takes the first turn after its start cursor.
   */
  #ownInput(
    entry: ChatEntry,
    live: TurnRecord,
    resent: Promise<AppendAnswer> | undefined,
  ): OwnInput | undefined {
    const { priorSeq } = live;
    if (live.seq !== undefined) return { seq: live.seq, priorSeq };
    if (resent !== undefined) return { seq: resent, priorSeq };
    const { answer } = entry.ledger.entry(live.id) ?? entry.ledger.current;
    return answer === undefined ? undefined : { seq: answer, priorSeq };
  }

  /**
   * Gives a resumed turn its append's seq. An append that failed: the turn goes on by the edge
   * rules while the chat is still live (its liveness watch bounds it), else it ends.
   */
  #awaitOwnSeq(entry: ChatEntry, turn: TurnStream, seq: OwnInput['seq']): void {
    if (!(seq instanceof Promise)) {
      turn.appendDone(seq);
      return;
    }
    void seq.then((answer) => {
      if (answer.ok) turn.appendDone(answer.seq);
      else if (entry.client.getState().turnLive) turn.appendDone(undefined);
      else turn.stop();
    });
  }

  /** A steering message or an action: noted in `side` (see there) while and after it goes out. */
  async #appendSideInput(entry: ChatEntry, append: () => Promise<AppendResult>): Promise<AppendResult> {
    const side = entry.side;
    side.count++;
    side.inFlight++;
    try {
      const result = await append();
      if (side.maxSeq !== null)
        side.maxSeq = result.seq === undefined ? null : Math.max(side.maxSeq, result.seq);
      return result;
    } catch (error) {
      side.maxSeq = null; // it may have been stored
      throw error;
    } finally {
      side.inFlight--;
    }
  }

  /** An append's `.in` seq: the highest known so far, or unknown when the server gave none. */
  #noteInSeq(entry: ChatEntry, seq: number | undefined): void {
    entry.inSeq = seq === undefined ? undefined : Math.max(seq, entry.inSeq ?? -1);
  }

  #replace(
    entry: ChatEntry,
    options: Omit<ConstructorParameters<typeof TurnStream>[0], 'coalesceDeltas' | 'onOver'>,
    releasePrevious = true,
  ): TurnStream {
    if (releasePrevious) entry.active?.release();
    // The spread last (our own literals, no key to lose): `{ ...options, more }` gives every
    // turn's options a hidden class of their own (V8 adds properties to a spread's copy outside
    // its transition tree), made in the old generation, and the reads of `mode` on every record
    // see a new one each turn.
    const turn: TurnStream = new TurnStream({
      coalesceDeltas: this.#options.coalesceDeltas,
      onOver: () => entry.ledger.over(turn.completedSeq, turn.completedInSeq, this.#owners.get(turn)),
      ...options,
    });
    entry.active = turn;
    return turn;
  }

  /**
   * useChat's stop: end the stream now; tell the agent (if the turn still runs) on the next
   * tick, so an unmount that aborts and then calls `disconnect()` or `close()` in the same
   * tick stays a mere disconnect. A send, action or `stop()` before then sends it first.
   */
  #stopTurn(entry: ChatEntry, turn: TurnStream): void {
    turn.stop();
    if (!turn.live) return;
    entry.stops.schedule(() => {
      if (!turn.live || !entry.client.getState().turnLive || entry.ledger.stopping) return;
      entry.ledger.markStopped(turn.started ? 'started' : 'unstarted');
      this.#sendStop(entry);
    });
  }

  #disconnectTurn(entry: ChatEntry, turn: TurnStream): void {
    turn.release();
    this.#onDisconnect(entry, turn);
  }

  #onDisconnect(entry: ChatEntry, turn: TurnStream): void {
    if (entry.active === turn) entry.active = undefined;
    if (this.#options.stopOnDisconnect === true && turn.live && entry.client.getState().turnLive) {
      if (!entry.ledger.stopping) entry.ledger.markStopped(turn.started ? 'started' : 'unstarted');
      this.#sendStop(entry);
    }
  }

  /**
   * Appends `stop` for the turn live now, once however many paths ask (the app's `stop()`,
   * useChat's abort): once stored, that turn is over for this page (a remount does not
   * resume it), unless a newer turn went live meanwhile.
   */
  #appendStop(entry: ChatEntry): Promise<void> {
    const { client, ledger } = entry;
    const target = ledger.current;
    if (target.stop !== undefined) return target.stop;
    const done = client.append(stopChunk()).then(
      (result) => {
        // Stored right after the seq known before the stopped send: that send never was.
        const before = ledger.stoppedSend()?.stoppedBefore?.inSeq;
        if (before !== undefined && result.seq === before + 1) {
          ledger.markStopped(undefined);
          ledger.clearStoppedSends();
        }
        this.#noteInSeq(entry, result.seq);
        ledger.stopStored(target);
      },
      (error: unknown) => {
        entry.inSeq = undefined;
        throw error;
      },
    );
    target.stop = done;
    const clear = () => {
      if (target.stop === done) target.stop = undefined;
    };
    done.then(clear, clear);
    return done;
  }

  #sendStop(entry: ChatEntry): void {
    const { client } = entry;
    this.#appendStop(entry).catch((error: unknown) => {
      // A closed session (409) ends the turn this page still reads (`markClosed` aborted its
      // reader with this same error), and that turn reports it: the stop adds no second report.
      if (isSessionClosed(error) && endsWithClose(entry.active)) return;
      if (isDurableChatError(error))
        client.emit({ type: 'error', chatId: client.chatId, error, fatal: false });
      else client.environment.warn(`could not append stop for chat ${client.chatId}: ${String(error)}`);
    });
  }

  #entry(chatId: string): ChatEntry {
    const existing = this.chats.get(chatId);
    if (existing !== undefined) {
      this.#disconnected.delete(chatId);
      return existing;
    }
    const options = this.#options;
    // Every client option is the transport's (the transport's own are left unread).
    const client = new SessionClient({
      ...options,
      chatId,
      startSession:
        this.#headStart === undefined
          ? options.startSession
          : this.#headStart.wrapStartSession(options.startSession),
    });
    const entry: ChatEntry = {
      client,
      active: undefined,
      stops: new DeferredStop(client.environment),
      draining: undefined,
      edge: undefined,
      inSeq: undefined,
      side: { count: 0, inFlight: 0, maxSeq: -1 },
      ledger: new TurnLedger(client.store),
      messageIds: undefined,
      resentParts: undefined,
      resending: undefined,
      leftSend: undefined,
    };
    this.chats.set(chatId, entry);
    return entry;
  }
}

/**
 * Whether the turn a stop ends had begun its reply, for the next send's attribution. Without
 * a reader of its own (a stop after a reload), a cursor past the turn's start means this page
 * already read some of its records.
 */
function stoppedTurnMark(active: TurnStream | undefined, state: ChatSessionState): 'started' | 'unstarted' {
  if (active?.live) return active.started ? 'started' : 'unstarted';
  const { lastEventId, turnStartCursor } = state;
  const readPastStart =
    lastEventId !== undefined && (turnStartCursor === undefined || lastEventId > turnStartCursor);
  return readPastStart ? 'started' : 'unstarted';
}

/** A turn stream ended: its ledger entry moves with how (see `TurnLedger`). */
function settleEntry(ledger: TurnLedger, entry: TurnEntry, turn: TurnStream, outcome: TurnOutcome): void {
  if (turn.started) ledger.move(entry, { type: 'started' });
  // Its turn-complete read: live until its consumer has every chunk (`over`). A stop ends it
  // once stored; a run gone or a rejection ends the chat's live turn (the stream does).
  // Released, cancelled, drained or a failed reader: this page let go; the turn goes on.
  if (outcome === 'completed' || outcome === 'rejected') ledger.move(entry, { type: 'read' });
}

function laterCursor(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  return b === undefined ? a : Math.max(a, b);
}

function isSessionClosed(error: unknown): boolean {
  return isDurableChatError(error) && error.code === 'SESSION_CLOSED';
}

/**
 * Whether `turn` ends (or ended) with the chat's close: still reading when the session was
 * marked closed (its reader aborted with the close's error, the stream fails with it), or
 * already failed with it.
 */
function endsWithClose(turn: TurnStream | undefined): boolean {
  if (turn === undefined) return false;
  return !turn.finished || (turn.outcome === 'failed' && isSessionClosed(turn.error));
}

/** An append the server refused outright (a 4xx other than 408 and 429): it was never stored. */
function refusedForGood(error: unknown): boolean {
  if (!isDurableChatError(error)) return false;
  const status = error.status;
  return status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429;
}

/** The stream of a send stopped before anything went out: it ends with nothing in it. */
function endedStream(): ReadableStream<UIMessageChunk> {
  return new ReadableStream<UIMessageChunk>({ start: (controller) => controller.close() });
}
