import type { UIMessageChunk } from 'ai';
import { type ClientEnvironment, listenForAbort } from '../client/environment.js';
import { isAbortError } from '../client/http.js';
import { DeltaPacer } from './delta-pacer.js';
import type { TurnGate } from './guarded-transport.js';
import { nextRelayPhase, type RelayEvent, type RelayPhase, STREAMING } from './relay-phase.js';
import type { ActivityUpdate } from './request-activity.js';

/** Waits one macrotask: React runs every effect cleanup of a commit before it returns. */
const nextMacrotask = (run: () => void) => setTimeout(run, 0);

/** What an abort meant, judged when it fired (the stream may be handed over later). */
export interface AbortWatch {
  /** Undefined until the signal aborts. */
  readonly seen: { attached: boolean; detaches: number } | undefined;
  /**
   * A newer resume replaced this one: `useChat` aborts a resume in flight when it starts
   * another (a tab's mount resume, then the turn it is shown), which is no stop. Or this page's
   * reader moved to a resume of another `Chat` (see `GuardedTransport`): the stream it let go
   * of ends silently, as a released session's.
   */
  superseded: boolean;
}

/** Notes, at the moment `signal` aborts, whether a component still held the chat. */
export function watchAbort(signal: AbortSignal | undefined, gate: TurnGate): AbortWatch {
  const watch: { seen: AbortWatch['seen']; superseded: boolean } = { seen: undefined, superseded: false };
  const note = () => {
    watch.seen = { attached: gate.attached() && !gate.released(), detaches: gate.detaches() };
  };
  listenForAbort(signal, note);
  return watch;
}

/**
 * The user's stop of a resume whose stream has not reached the chat yet (the read waits for its
 * first answer, up to the connect timeout): no relay hears it, so the turn is stopped now, as the
 * relay would (not for a cleanup in the same tick or a newer resume). Returns the listener's end.
 */
export function stopBeforeStream(
  signal: AbortSignal | undefined,
  watch: AbortWatch,
  gate: TurnGate,
): () => void {
  let pending = true;
  listenForAbort(signal, () => {
    const seen = watch.seen;
    if (seen?.attached !== true) return;
    afterAbort(seen, watch, gate, (userStop) => {
      if (pending && userStop) void gate.stop();
    });
  });
  return () => {
    pending = false;
  };
}

/**
 * Judges an abort a macrotask later, once React ran every cleanup of its commit: the user's stop
 * unless the component let go of the session meanwhile (unmount, switch) or a newer resume
 * replaced this one.
 */
function afterAbort(
  seen: { detaches: number },
  watch: AbortWatch,
  gate: TurnGate,
  judged: (userStop: boolean) => void,
): void {
  nextMacrotask(() => judged(gate.detaches() === seen.detaches && !gate.released() && !watch.superseded));
}

/** The clock the pacing reads (the session's `environment`, so tests inject it). */
export type PacingClock = Pick<ClientEnvironment, 'now' | 'setTimeout' | 'clearTimeout'>;

const DUE = Symbol('due');

/** A pull that never settles: a parked chat hears nothing more. */
const parkedPull = () => new Promise<void>(() => {});

/**
 * Forwards a stream to `useChat` and decides what an abort means. An abort while a
 * component still holds the chat, not followed by a cleanup in the same tick, is the
 * user's stop: the stream ends now and the agent is stopped. An abort from a cleanup
 * (unmount, chat switch, StrictMode; `@ai-sdk/react` 4 stops its chat on cleanup), or from
 * a newer resume that replaced this one (`AbortWatch.superseded`), only disconnects. Once the session is released, the stream neither ends nor errors: the chat
 * that was left hears nothing (no `onError`, no `onFinish`), and the reply resumes when
 * the chat is shown again.
 *
 * Text and reasoning deltas are paced (see `DeltaPacer`): a held delta is handed over
 * before the stream ends or errors, so the chat shows every chunk that reached the page.
 * On the user's stop it is handed over too, but `useChat` applies nothing after its
 * abort: what was held then (at most one window of text) is not shown. A chat that was
 * left drops it.
 *
 * Where the stream stands is one `RelayPhase`, moved only through `nextRelayPhase`.
 */
export function relay(
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
  let phase = STREAMING;
  let controllerRef: ReadableStreamDefaultController<UIMessageChunk> | undefined;
  /** A read not yet answered: pacing may hand over a held delta while it waits. */
  let reading: Promise<ReadableStreamReadResult<UIMessageChunk>> | undefined;
  const letGo = () => reader.cancel().catch(() => undefined);
  /**
   * Moves along the table of `nextRelayPhase`: the phase entered, or undefined when the event
   * left the phase as it was. Parking is silent whatever led to it, so it is done here.
   */
  const move = (event: RelayEvent): RelayPhase | undefined => {
    const next = nextRelayPhase(phase, event);
    if (next === phase) return undefined;
    phase = next;
    if (next.type === 'failing') return next;
    signal?.removeEventListener('abort', onAbort);
    onEnd();
    if (next.type === 'parked') {
      pacer.drop();
      update('none');
      void letGo();
    }
    return next;
  };
  const handOver = (
    controller: ReadableStreamDefaultController<UIMessageChunk>,
    chunks: UIMessageChunk[],
  ) => {
    for (const chunk of chunks) controller.enqueue(chunk);
  };
  const onAbort = () => {
    const seen = watch.seen ?? { attached: gate.attached() && !gate.released(), detaches: gate.detaches() };
    if (move({ type: 'aborted', left: !seen.attached })?.type !== 'ended') return;
    update('none');
    if (controllerRef !== undefined) {
      handOver(controllerRef, pacer.take(clock.now()));
      controllerRef.close();
    }
    afterAbort(seen, watch, gate, (userStop) => {
      if (userStop) void gate.stop().finally(letGo);
      else void letGo();
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
  /** The source failed, or the failure `failing` kept is raised now. */
  const fail = (controller: ReadableStreamDefaultController<UIMessageChunk>, error: unknown) => {
    const next = move({
      type: 'failed',
      error,
      left: gate.released() || watch.superseded,
      held: pacer.due() !== undefined,
    });
    if (next === undefined) return undefined;
    if (next.type === 'parked') return parkedPull();
    if (next.type === 'failing') {
      handOver(controller, pacer.take(clock.now()));
      return undefined;
    }
    // A stop from outside the chat (`session.stop()`) ends the turn with an `AbortError`: it is
    // passed on, so useChat reports it as its own stop (`isAbort`), and it is no failure.
    update('none', error instanceof Error && !isAbortError(error) ? error : undefined);
    controller.error(error);
    return undefined;
  };
  // What the activity reports, not where the stream stands: kept beside the phase.
  let first = true;
  let failure: Error | undefined;
  return new ReadableStream<UIMessageChunk>({
    start(controller) {
      controllerRef = controller;
      listenForAbort(signal, onAbort);
    },
    async pull(controller) {
      const at = phase;
      if (at.type === 'parked') return parkedPull();
      if (at.type === 'ended') return;
      if (at.type === 'failing') return fail(controller, at.error);
      for (;;) {
        reading ??= reader.read();
        let result: ReadableStreamReadResult<UIMessageChunk> | typeof DUE;
        try {
          result = await readOrDue(reading);
        } catch (error) {
          reading = undefined;
          return fail(controller, error);
        }
        // An abort came while the read waited: the chunk read, if any, is not the chat's.
        if (phase.type !== 'streaming') return phase.type === 'parked' ? parkedPull() : undefined;
        if (result === DUE) {
          handOver(controller, pacer.take(clock.now()));
          return;
        }
        reading = undefined;
        const { done, value } = result;
        if (done) {
          handOver(controller, pacer.take(clock.now()));
          move({ type: 'done' });
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
      pacer.drop();
      // useChat cancels the stream itself when it meets an `error` chunk: that request failed.
      if (move({ type: 'cancelled' }) !== undefined && failure !== undefined) update('none', failure);
      return reader.cancel(reason);
    },
  });
}

/** A stream that never ends: what a chat the page has let go of receives. */
export function parkedStream(): ReadableStream<UIMessageChunk> {
  return new ReadableStream<UIMessageChunk>({ pull: parkedPull });
}
