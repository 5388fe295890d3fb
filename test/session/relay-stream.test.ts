import type { UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { resolveEnvironment } from '../../src/client/environment.js';
import { DEFAULT_RENDER_THROTTLE_MS } from '../../src/session/delta-pacer.js';
import type { TurnGate } from '../../src/session/guarded-transport.js';
import { relay, watchAbort } from '../../src/session/relay-stream.js';
import { ActivityTracker } from '../../src/session/request-activity.js';
import { manualClock } from './support/manual-clock.js';

const W = DEFAULT_RENDER_THROTTLE_MS;
const delta = (text: string): UIMessageChunk => ({ type: 'text-delta', id: 't', delta: text });

/** The page as the relay sees it: one attached component, the default window, a clock the test moves. */
function page(clock: ReturnType<typeof manualClock>): TurnGate {
  const activity = new ActivityTracker();
  return {
    chatId: 'relay',
    activity,
    clock: resolveEnvironment(clock.environment),
    renderWindowMs: () => W,
    enter: async () => {},
    refused: () => {},
    ownSend: () => {},
    followedReply: () => {},
    leave: () => {},
    streamOpened: () => () => {},
    resumeStarted: () => () => {},
    noteTurnMessage: () => {},
    resumesTurn: () => undefined,
    shownMessage: () => undefined,
    followsOtherTab: async () => false,
    followResume: () => () => {},
    announce: () => {},
    takeStopRequest: () => false,
    attached: () => true,
    detaches: () => 0,
    released: () => false,
    turnLive: async () => true,
    stop: async () => {},
    warn: () => {},
  };
}

/** A source the test feeds by hand, relayed as `useChat` would receive it. */
function relayed(
  clock: ReturnType<typeof manualClock>,
  options: { page?: Partial<TurnGate>; signal?: AbortSignal } = {},
) {
  let source!: ReadableStreamDefaultController<UIMessageChunk>;
  const sourceCancelled = { count: 0 };
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      source = controller;
    },
    cancel() {
      sourceCancelled.count += 1;
    },
  });
  const gate = { ...page(clock), ...options.page };
  const watch = watchAbort(options.signal, gate);
  const ends = { count: 0 };
  const out = relay(stream, options.signal, watch, gate, gate.activity.begin('sending'), () => {
    ends.count += 1;
  });
  return { source, reader: out.getReader(), activity: gate.activity, watch, ends, sourceCancelled };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('the relay paces deltas and never loses a held one', () => {
  it('hands the held delta over when the window ends, by the injected clock', async () => {
    const clock = manualClock();
    const { source, reader } = relayed(clock);
    source.enqueue(delta('a'));
    expect((await reader.read()).value).toEqual(delta('a'));
    source.enqueue(delta('b'));
    source.enqueue(delta('c'));
    const next = reader.read();
    let settled = false;
    void next.then(() => {
      settled = true;
    });
    await tick();
    clock.advance(W - 1);
    await tick();
    expect(settled).toBe(false);
    clock.advance(1);
    expect((await next).value).toEqual(delta('bc'));
  });

  it('a source that ends hands over what is held first', async () => {
    const clock = manualClock();
    const { source, reader, activity } = relayed(clock);
    source.enqueue(delta('a'));
    source.enqueue(delta('b'));
    source.close();
    expect((await reader.read()).value).toEqual(delta('a'));
    expect((await reader.read()).value).toEqual(delta('b'));
    expect((await reader.read()).done).toBe(true);
    expect(activity.get().phase).toBe('none');
  });

  it('a source that fails hands over what is held, then fails the stream with its error', async () => {
    const clock = manualClock();
    const { source, reader, activity } = relayed(clock);
    source.enqueue(delta('a'));
    expect((await reader.read()).value).toEqual(delta('a'));
    source.enqueue(delta('b'));
    await tick();
    const failure = new Error('connection lost for good');
    source.error(failure);
    // Nobody is reading when the failure comes in (useChat is busy rendering, say): erroring
    // the stream at once would discard the delta queued for it, so the relay raises the error
    // on the next read.
    await tick();
    expect((await reader.read()).value).toEqual(delta('b'));
    await expect(reader.read()).rejects.toBe(failure);
    expect(activity.get()).toMatchObject({ phase: 'none', error: failure });
  });

  it('a chat another one superseded drops the held delta when its source fails, and hears nothing', async () => {
    const clock = manualClock();
    const { source, reader, activity, watch } = relayed(clock);
    source.enqueue(delta('a'));
    expect((await reader.read()).value).toEqual(delta('a'));
    source.enqueue(delta('b'));
    await tick();
    // The session transport gave this chat's reader to a resume of another \`Chat\` (see
    // \`GuardedTransport\`): the stream it let go of fails, and this chat was left.
    watch.superseded = true;
    source.error(new Error('this reader was released; resume to continue'));
    await tick();
    let settled = false;
    void reader.read().then(
      () => {
        settled = true;
      },
      () => {
        settled = true;
      },
    );
    clock.advance(W);
    await tick();
    await tick();
    expect(settled).toBe(false);
    expect(activity.get()).toMatchObject({ phase: 'none', error: undefined });
  });
});

/** A read that has not settled after the pacing window and a few macrotasks. */
async function stillPending(clock: ReturnType<typeof manualClock>, read: Promise<unknown>): Promise<boolean> {
  let settled = false;
  const note = () => {
    settled = true;
  };
  void read.then(note, note);
  clock.advance(W);
  await tick();
  await tick();
  return !settled;
}

describe('what an abort means to the relay', () => {
  /** 'a' shown, 'b' held when the test aborts. */
  async function holding(options: Parameters<typeof relayed>[1]) {
    const clock = manualClock();
    const relay = relayed(clock, options);
    relay.source.enqueue(delta('a'));
    expect((await relay.reader.read()).value).toEqual(delta('a'));
    relay.source.enqueue(delta('b'));
    await tick();
    return { clock, ...relay };
  }

  it("the user's stop: the held delta is handed over, the stream closes, then the agent is stopped", async () => {
    const controller = new AbortController();
    let stops = 0;
    const { reader, activity, ends, sourceCancelled } = await holding({
      signal: controller.signal,
      page: {
        stop: async () => {
          stops += 1;
        },
      },
    });
    controller.abort();
    expect(ends.count).toBe(1);
    expect(activity.get()).toMatchObject({ phase: 'none', error: undefined });
    expect((await reader.read()).value).toEqual(delta('b'));
    expect((await reader.read()).done).toBe(true);
    expect(stops).toBe(0); // judged a macrotask later: a cleanup may follow in the same tick
    await tick();
    await tick();
    expect(stops).toBe(1);
    expect(sourceCancelled.count).toBe(1);
    expect(ends.count).toBe(1);
  });

  it('a cleanup in the same tick only disconnects: the stream closes, the agent goes on', async () => {
    const controller = new AbortController();
    let detaches = 0;
    let stops = 0;
    const { reader, ends, sourceCancelled } = await holding({
      signal: controller.signal,
      page: {
        detaches: () => detaches,
        stop: async () => {
          stops += 1;
        },
      },
    });
    controller.abort();
    detaches += 1;
    expect((await reader.read()).value).toEqual(delta('b'));
    expect((await reader.read()).done).toBe(true);
    await tick();
    await tick();
    expect(stops).toBe(0);
    expect(sourceCancelled.count).toBe(1);
    expect(ends.count).toBe(1);
  });

  it('an abort when no component holds the chat parks it: it hears nothing more, not even the held delta', async () => {
    const controller = new AbortController();
    let stops = 0;
    const { clock, reader, activity, ends, sourceCancelled } = await holding({
      signal: controller.signal,
      page: {
        attached: () => false,
        stop: async () => {
          stops += 1;
        },
      },
    });
    controller.abort();
    expect(await stillPending(clock, reader.read())).toBe(true);
    expect(activity.get()).toMatchObject({ phase: 'none', error: undefined });
    expect(ends.count).toBe(1);
    expect(sourceCancelled.count).toBe(1);
    expect(stops).toBe(0);
  });

  it("the user's stop after a read failure that was kept: the stream closes, the failure is not raised", async () => {
    const controller = new AbortController();
    const { source, reader, activity, ends } = await holding({ signal: controller.signal });
    source.error(new Error('connection lost for good'));
    await tick();
    controller.abort();
    expect((await reader.read()).value).toEqual(delta('b'));
    expect((await reader.read()).done).toBe(true);
    expect(activity.get()).toMatchObject({ phase: 'none', error: undefined });
    expect(ends.count).toBe(1);
  });

  it('useChat cancelling after an error chunk reports the request failed, once', async () => {
    const clock = manualClock();
    const { source, reader, activity, ends, sourceCancelled } = relayed(clock);
    source.enqueue({ type: 'error', errorText: 'the model refused' });
    expect((await reader.read()).value).toEqual({ type: 'error', errorText: 'the model refused' });
    await reader.cancel();
    expect(activity.get()).toMatchObject({ phase: 'none', error: new Error('the model refused') });
    expect(ends.count).toBe(1);
    expect(sourceCancelled.count).toBe(1);
  });
});
