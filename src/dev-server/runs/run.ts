import type { UIMessage, UIMessageChunk } from 'ai';
import type { ChatTaskWirePayload } from '../../protocol/types.js';
import type { AgentHookContext, AgentStream, AgentTurnContext } from '../agents/define-agent.js';
import type { DevServerContext } from '../context.js';
import { newMessageId, newRunId } from '../ids.js';
import type { InRecord } from '../store/in-log.js';
import type { LiveRun, RunState, Session } from '../store/session.js';
import { type AgentScope, runInAgentScope } from './agent-scope.js';
import { applyInput } from './apply-input.js';
import { type BootResult, bootMessages } from './boot.js';
import { divergeAnswer } from './diverge-answer.js';
import { reduceMessage } from './history.js';
import { writeChunks, writeTurnComplete, writeUpgradeRequired } from './out-writer.js';
import { type PipeResult, pipeChunks } from './pipe-chunks.js';
import { writeSnapshot } from './snapshot.js';
import { toChunkIterable } from './to-chunk-stream.js';
import { validateAction, validateClientData } from './validation.js';

export interface RunStart {
  continuation: boolean;
  previousRunId: string | undefined;
  /** The first run's `basePayload` (`preload` or `submit-message`). */
  firstPayload: ChatTaskWirePayload | undefined;
}

export type TurnTrigger = AgentTurnContext['trigger'];
type EndReason = 'crash' | 'cancel' | 'shutdown' | 'upgrade' | 'end';

/**
 * One run of an agent on a session: boots (snapshot + `.out` replay, or `hydrateMessages`),
 * then consumes `.in` records in order. Idle past the timeout it suspends (memory released,
 * restored from the snapshot on resume, as a checkpoint would be). A stop aborts the live
 * turn as soon as it is appended; everything else waits its turn.
 */
export class Run implements LiveRun, AgentScope {
  readonly id = newRunId();
  state: RunState = 'booting';
  turns = 0;
  private messages: UIMessage[] = [];
  private cursor: number;
  /** `.in` records taken early (pending-message injection, splices). */
  private readonly taken = new Set<number>();
  private lastConsumedSeq: number | null = null;
  private turnAbort: AbortController | null = null;
  private turnInSeq: number | null = null;
  /** A rejection the agent left unhandled during the live turn: the turn fails with it. */
  private turnFailure: { reason: unknown } | null = null;
  private stopMessage: string | undefined;
  private wake: (() => void) | null = null;
  /** Ends the simulated cold start early (the run was terminated while it booted). */
  private cutColdStart: (() => void) | null = null;
  private ended: EndReason | null = null;
  private endAfterTurn = false;
  private upgradeRequested = false;
  private rerun: UIMessage | undefined;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly context: DevServerContext,
    private readonly session: Session,
    private readonly start: RunStart,
  ) {
    this.cursor = session.inAckSeq + 1;
    this.unsubscribe = session.in.subscribe((record) => this.onInput(record));
  }

  /** Ends the run now, as a crash, a cancellation or the server shutting down would. */
  terminate(reason: 'crash' | 'cancel' | 'shutdown'): void {
    if (this.ended !== null) return;
    if (reason !== 'shutdown' && this.turnAbort !== null) {
      this.session.inFlight = { inSeq: this.turnInSeq, message: undefined, splice: true };
    }
    this.ended = reason;
    this.turnAbort?.abort();
    this.wake?.();
    this.cutColdStart?.();
    // The run is gone from the session's point of view now, not when its stack unwinds.
    this.detach();
  }

  private detach(): boolean {
    const session = this.session;
    if (session.run !== this) return false;
    session.run = null;
    session.row.currentRunId = null;
    session.touch();
    return true;
  }

  /** @internal */
  failFromUnhandled(reason: unknown): void {
    this.context.logger.warn(`run ${this.id}: the agent left a promise rejection unhandled`, reason);
    if (this.turnAbort === null || this.turnFailure !== null) return;
    this.turnFailure = { reason };
    this.turnAbort.abort();
  }

  /** @internal */
  begin(): void {
    runInAgentScope(this, () => this.main()).catch((error: unknown) => {
      this.context.logger.warn(`run ${this.id} crashed`, error);
      this.ended = 'crash';
      this.exit();
    });
  }

  private async main(): Promise<void> {
    await this.coldStart();
    if (this.ended !== null) return this.exit();
    const boot: BootResult = await bootMessages(this.context, this.session);
    this.messages = boot.messages;
    if (boot.skipSeq !== null) this.take(boot.skipSeq);
    this.rerun = boot.rerun;
    await this.session.agent.onBoot?.(this.hookContext(undefined));
    const first = this.start.firstPayload;
    if (first?.trigger === 'preload') await this.preload(first);
    else if (first?.message !== undefined) await this.turn(null, first, 'submit-message');
    else if (this.rerun !== undefined) {
      const payload = this.durablePayload({ trigger: 'submit-message', message: this.rerun });
      await this.turn(null, payload, 'submit-message');
    }
    while (this.ended === null && !this.endAfterTurn) {
      const record = await this.nextRecord();
      if (record !== undefined) await this.handle(record);
    }
    if (this.ended === null) this.ended = 'end';
    this.exit();
  }

  /** The simulated cold start (`bootDelayMs`); a terminate meanwhile cuts it short. */
  private coldStart(): Promise<void> {
    const delayMs = this.context.options.bootDelayMs;
    if (delayMs <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.cutColdStart = null;
        resolve();
      }, delayMs);
      this.cutColdStart = () => {
        clearTimeout(timer);
        this.cutColdStart = null;
        resolve();
      };
    });
  }

  private durablePayload(extra: Partial<ChatTaskWirePayload>): ChatTaskWirePayload {
    const base = this.session.row.triggerConfig.basePayload;
    return { chatId: base.chatId, trigger: 'submit-message', metadata: base.metadata, ...extra };
  }

  private take(seq: number): void {
    // Only seqs ahead of the cursor need remembering: the set stays small on long chats.
    if (seq >= this.cursor) this.taken.add(seq);
    this.lastConsumedSeq = Math.max(this.lastConsumedSeq ?? -1, seq);
  }

  /** Input answered without a turn-complete (stop, preload, close): acknowledged at once. */
  private consumeWithoutTurn(seq: number): void {
    this.take(seq);
    if (seq > this.session.inAckSeq && this.turnAbort === null) {
      this.session.inAckSeq = seq;
      this.session.in.release(seq);
      this.session.changed();
    }
  }

  private onInput(record: InRecord): void {
    if (record.chunk.kind === 'stop' && this.turnAbort !== null && record.seq > (this.turnInSeq ?? -1)) {
      this.session.in.spend(record);
      this.stopMessage = record.chunk.message;
      this.turnAbort.abort();
    }
    this.wake?.();
  }

  private idleTimeoutMs(): number {
    const base = this.session.row.triggerConfig;
    const seconds =
      base.basePayload.idleTimeoutInSeconds ??
      base.idleTimeoutInSeconds ??
      this.session.agent.idleTimeoutInSeconds ??
      this.context.options.idleTimeoutSeconds;
    return seconds * 1000;
  }

  private async nextRecord(): Promise<InRecord | undefined> {
    while (this.ended === null) {
      for (const record of this.session.in.from(this.cursor)) {
        this.cursor = record.seq + 1;
        if (this.taken.delete(record.seq)) continue;
        if (record.chunk.kind === 'stop') {
          this.consumeWithoutTurn(record.seq);
          continue;
        }
        if (this.state === 'suspended') await this.resume();
        return record;
      }
      if (this.state !== 'suspended') this.state = 'idle';
      const outcome = await this.waitForInput(this.state === 'idle' ? this.idleTimeoutMs() : undefined);
      if (outcome === 'timeout' && this.ended === null) await this.suspend();
    }
    return undefined;
  }

  private waitForInput(timeoutMs: number | undefined): Promise<'input' | 'timeout'> {
    return new Promise((resolve) => {
      const timer =
        timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              this.wake = null;
              resolve('timeout');
            }, timeoutMs);
      timer?.unref();
      this.wake = () => {
        if (timer !== undefined) clearTimeout(timer);
        this.wake = null;
        resolve('input');
      };
    });
  }

  private async suspend(): Promise<void> {
    this.state = 'suspended';
    await this.session.agent.onChatSuspend?.(this.hookContext(undefined));
    // The snapshot written after the last turn is the checkpoint; memory is freed.
    this.messages = [];
  }

  private async resume(): Promise<void> {
    this.state = 'resuming';
    if (this.session.agent.hydrateMessages === undefined) {
      const snapshot = await this.context.objectStore.readSnapshot(this.session.row.id);
      this.messages = snapshot?.messages ?? [];
    }
    await this.session.agent.onChatResume?.(this.hookContext(undefined));
  }

  private async handle(record: InRecord): Promise<void> {
    if (record.chunk.kind !== 'message') return;
    const payload = record.chunk.payload;
    this.take(record.seq);
    switch (payload.trigger) {
      case 'handover-prepare':
        if (answeredHandover(payload)) {
          await this.adoptHandover(record.seq, payload);
          return;
        }
        await this.turn(record.seq, payload, payload.trigger);
        return;
      case 'submit-message':
      case 'regenerate-message':
        await this.turn(record.seq, payload, payload.trigger);
        return;
      case 'action':
        await this.action(record.seq, payload);
        return;
      case 'preload':
        this.consumeWithoutTurn(record.seq);
        await this.preload(payload);
        return;
      case 'close':
        this.consumeWithoutTurn(record.seq);
        this.endAfterTurn = true;
        return;
    }
  }

  /**
   * A handover whose history ends with the app route's own answer: the first turn happened
   * there, so the agent takes the history as its own (hooks fire, the snapshot is written)
   * and answers nothing. The turn-complete (no content before it) marks `.out`'s first turn
   * as done: a reader's peek finds the chat settled, and the next send's reply comes after it.
   */
  private async adoptHandover(inSeq: number, payload: ChatTaskWirePayload): Promise<void> {
    const agent = this.session.agent;
    this.take(inSeq);
    const clientData = await validateClientData(agent, payload.metadata ?? this.durablePayload({}).metadata);
    if (!clientData.ok) return this.reject(inSeq, clientData.message);
    // Honoured for the first turn only (the spec): a run that has history keeps it.
    if (agent.hydrateMessages === undefined && this.messages.length === 0)
      this.messages = [...(payload.headStartMessages ?? [])];
    if (!this.session.chatStarted) {
      this.session.chatStarted = true;
      if (!this.start.continuation) await agent.onChatStart?.(this.hookContext(clientData.value));
    }
    await agent.onBeforeTurnComplete?.(this.hookContext(clientData.value));
    await writeTurnComplete(this.context, this.session, {
      inSeq: this.ackSeq(inSeq),
      runId: this.id,
      refreshToken: true,
    });
    this.state = 'idle';
    this.turns += 1;
    await agent.onTurnComplete?.(this.hookContext(clientData.value));
    await writeSnapshot(this.context, this.session, this.messages);
  }

  private async preload(payload: ChatTaskWirePayload): Promise<void> {
    if (this.session.preloaded) return;
    this.session.preloaded = true;
    this.session.changed();
    const clientData = await validateClientData(this.session.agent, payload.metadata);
    await this.session.agent.onPreload?.(this.hookContext(clientData.ok ? clientData.value : undefined));
  }

  private hookContext(clientData: unknown): AgentHookContext {
    return {
      chatId: this.session.row.triggerConfig.basePayload.chatId,
      sessionId: this.session.row.id,
      runId: this.id,
      messages: this.messages,
      clientData,
      continuation: this.start.continuation,
      previousRunId: this.start.previousRunId,
      turn: this.turns,
    };
  }

  private async reject(inSeq: number | null, reason: string): Promise<void> {
    this.context.logger.warn(`session ${this.session.row.id}: turn rejected by the agent (${reason})`);
    await writeTurnComplete(this.context, this.session, {
      inSeq: this.ackSeq(inSeq),
      runId: this.id,
      refreshToken: false,
    });
    this.state = 'idle';
  }

  private ackSeq(inSeq: number | null): number | null {
    if (this.lastConsumedSeq === null) return inSeq;
    return Math.max(this.lastConsumedSeq, inSeq ?? -1);
  }

  private async turn(
    inSeq: number | null,
    payload: ChatTaskWirePayload,
    trigger: TurnTrigger,
  ): Promise<void> {
    const agent = this.session.agent;
    this.state = 'streaming';
    const clientData = await validateClientData(agent, payload.metadata ?? this.durablePayload({}).metadata);
    if (!clientData.ok) return this.reject(inSeq, clientData.message);
    const applied = await applyInput(this.session, this.messages, payload, trigger, clientData.value);
    this.messages = applied.messages;
    const continued = applied.continued;
    try {
      await agent.onValidateMessages?.(this.hookContext(clientData.value));
    } catch (error) {
      return this.reject(inSeq, error instanceof Error ? error.message : 'onValidateMessages threw');
    }
    if (!this.session.chatStarted && payload.message?.role === 'user') {
      this.session.chatStarted = true;
      this.session.changed();
      if (!this.start.continuation) await agent.onChatStart?.(this.hookContext(clientData.value));
    }
    const abort = this.beginTurn(inSeq);
    const responseMessageId = continued?.id ?? newMessageId();
    const context: AgentTurnContext = {
      ...this.hookContext(clientData.value),
      trigger,
      responseMessageId,
      signal: abort.signal,
      takePendingMessages: () => this.takePendingMessages(),
      requestUpgrade: () => {
        this.upgradeRequested = true;
      },
      endRun: () => {
        this.endAfterTurn = true;
      },
    };
    await agent.onTurnStart?.(context);
    if (this.upgradeRequested) return this.upgrade(inSeq, payload.message);
    const names = [this.session.row.id, this.session.row.externalId];
    const fault = this.context.faults.takeTurnFault(names);
    // The fault's new run answers otherwise than the run it replaced, as a real model would.
    const diverge = this.session.divergeNextAnswer;
    this.session.divergeNextAnswer = false;
    const result = await this.stream(
      () => agent.run(context),
      abort,
      fault?.afterChunks,
      responseMessageId,
      diverge ? divergeAnswer : undefined,
    );
    const failed = this.endTurn(result);
    if (this.ended !== null) return;
    if (result.interrupted && fault?.kind === 'crash') {
      this.session.inFlight = { inSeq, message: payload.message, splice: true };
      this.ended = 'crash';
      // Gone at once: an append from now on must start the continuation itself.
      this.detach();
      return;
    }
    if (result.interrupted && fault?.kind === 'close') {
      this.session.close(fault.reason);
      return;
    }
    if (this.upgradeRequested || (result.interrupted && fault?.kind === 'upgrade')) {
      if (fault?.differentAnswer === true) this.session.divergeNextAnswer = true;
      return this.upgrade(inSeq, payload.message);
    }
    await this.finishTurn(inSeq, result, continued, clientData.value, abort.signal.aborted && !failed);
    this.turns += 1;
    if (agent.maxTurns !== undefined && this.turns >= agent.maxTurns) this.endAfterTurn = true;
  }

  /** Leaves the streaming phase; true when an unhandled rejection failed the turn (into `result.error`). */
  private endTurn(result: PipeResult): boolean {
    this.turnAbort = null;
    this.session.liveTurn = null;
    this.session.changed();
    const failure = this.turnFailure;
    this.turnFailure = null;
    if (failure === null) return false;
    if (result.error === undefined) result.error = failure.reason;
    return true;
  }

  private beginTurn(inSeq: number | null): AbortController {
    const abort = new AbortController();
    this.turnAbort = abort;
    this.turnInSeq = inSeq;
    this.session.liveTurn = { inSeq };
    this.session.changed();
    this.stopMessage = undefined;
    // A stop appended before this turn began (during a cold start) still aborts it.
    const stop = this.session.in
      .from((inSeq ?? -1) + 1)
      .find((record) => record.chunk.kind === 'stop' && record.spent !== true);
    if (stop !== undefined && stop.chunk.kind === 'stop') {
      this.session.in.spend(stop);
      this.stopMessage = stop.chunk.message;
      abort.abort();
    }
    return abort;
  }

  private async stream(
    produce: () => AgentStream | undefined | Promise<AgentStream | undefined>,
    abort: AbortController,
    interruptAfter: number | undefined,
    messageId: string,
    transform?: (source: AsyncIterable<UIMessageChunk>) => AsyncIterable<UIMessageChunk>,
  ): Promise<PipeResult> {
    try {
      const produced = await produce();
      // An upgrade asked for inside `run` re-runs the turn on the new run: nothing is piped here.
      if (produced === undefined || this.upgradeRequested)
        return { chunks: [], interrupted: false, error: undefined };
      const chunks = toChunkIterable(produced, {
        messages: this.messages,
        generateMessageId: () => messageId,
        onError: (error) => (error instanceof Error ? error.message : 'the agent failed'),
      });
      const source = transform === undefined ? chunks : transform(chunks);
      return await pipeChunks(this.session, source, {
        signal: abort.signal,
        messageId,
        interruptAfter,
        logger: this.context.logger,
      });
    } catch (error) {
      return { chunks: [], interrupted: false, error };
    }
  }

  private async finishTurn(
    inSeq: number | null,
    result: PipeResult,
    continued: UIMessage | undefined,
    clientData: unknown,
    stopped: boolean,
  ): Promise<void> {
    const agent = this.session.agent;
    if (result.error !== undefined) {
      this.context.logger.warn(`session ${this.session.row.id}: the agent's turn failed`, result.error);
      const errorText = result.error instanceof Error ? result.error.message : 'the agent failed';
      writeChunks(this.session, [{ type: 'error', errorText }]);
    }
    const response = await reduceMessage(result.chunks, continued, this.context.logger);
    if (response !== undefined) {
      const position = this.messages.findIndex((message) => message.id === response.id);
      if (position === -1) this.messages.push(response);
      else this.messages[position] = response;
    }
    if (stopped) await agent.onStop?.({ ...this.hookContext(clientData), message: this.stopMessage });
    await agent.onBeforeTurnComplete?.(this.hookContext(clientData));
    await writeTurnComplete(this.context, this.session, {
      inSeq: this.ackSeq(inSeq),
      runId: this.id,
      refreshToken: result.error === undefined,
    });
    this.state = 'idle';
    await agent.onTurnComplete?.(this.hookContext(clientData));
    await writeSnapshot(this.context, this.session, this.messages);
  }

  private takePendingMessages(): UIMessage[] {
    const taken: UIMessage[] = [];
    for (const record of this.session.in.from(this.cursor)) {
      if (this.taken.has(record.seq) || record.chunk.kind !== 'message') continue;
      const { payload } = record.chunk;
      if (payload.trigger !== 'submit-message' || payload.message?.role !== 'user') continue;
      this.take(record.seq);
      this.messages.push(payload.message);
      taken.push(payload.message);
    }
    return taken;
  }

  private async action(inSeq: number, payload: ChatTaskWirePayload): Promise<void> {
    const agent = this.session.agent;
    this.state = 'streaming';
    const clientData = await validateClientData(agent, payload.metadata ?? this.durablePayload({}).metadata);
    if (!clientData.ok) return this.reject(inSeq, clientData.message);
    const action = await validateAction(agent, payload.action);
    if (!action.ok) return this.reject(inSeq, action.message);
    const abort = this.beginTurn(inSeq);
    const handler = agent.onAction;
    const result = await this.stream(
      () => handler?.({ ...this.hookContext(clientData.value), action: action.value, signal: abort.signal }),
      abort,
      undefined,
      newMessageId(),
    );
    this.endTurn(result);
    if (this.ended !== null) return;
    await this.finishTurnWithoutHooks(inSeq, result);
  }

  private async finishTurnWithoutHooks(inSeq: number, result: PipeResult): Promise<void> {
    if (result.error !== undefined) {
      this.context.logger.warn(`session ${this.session.row.id}: the agent's action failed`, result.error);
    }
    const response = await reduceMessage(result.chunks, undefined, this.context.logger);
    if (response !== undefined) this.messages.push(response);
    await writeTurnComplete(this.context, this.session, {
      inSeq: this.ackSeq(inSeq),
      runId: this.id,
      refreshToken: result.error === undefined,
    });
    this.state = 'idle';
    await writeSnapshot(this.context, this.session, this.messages);
  }

  private upgrade(inSeq: number | null, message: UIMessage | undefined): void {
    writeUpgradeRequired(this.session);
    this.session.inFlight = { inSeq, message, splice: false };
    this.session.changed();
    this.ended = 'upgrade';
  }

  private exit(): void {
    if (this.state === 'exited') return;
    this.state = 'exited';
    this.unsubscribe();
    this.wake = null;
    const session = this.session;
    if (!this.detach()) return;
    if (this.ended === 'shutdown' || this.ended === 'crash' || this.ended === 'cancel' || session.closed)
      return;
    // The server swaps an upgraded run at once; after a clean exit, waiting input starts the next run.
    const waiting = session.in
      .from(session.inAckSeq + 1)
      .some((record) => record.chunk.kind === 'message' && !this.taken.has(record.seq));
    if (this.ended === 'upgrade' || waiting) {
      startRun(this.context, session, {
        continuation: true,
        previousRunId: this.id,
        firstPayload: undefined,
      });
    }
  }
}

/** A handover that carries the route's answer: its history ends with an assistant message. */
function answeredHandover(payload: ChatTaskWirePayload): boolean {
  const history = payload.headStartMessages;
  return history !== undefined && history.length > 0 && history[history.length - 1]?.role === 'assistant';
}

/** Starts a run on the session and makes it the session's live run. */
export function startRun(context: DevServerContext, session: Session, start: RunStart): Run {
  const run = new Run(context, session, start);
  session.run = run;
  session.row.currentRunId = run.id;
  session.lastRunId = run.id;
  session.runCount += 1;
  session.touch();
  run.begin();
  return run;
}
