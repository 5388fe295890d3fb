import { describe, expect, it } from 'vitest';
import { createSessionStore } from '../../src/client/session-store.js';
import { type TurnEntryEvent, type TurnEntryState, TurnLedger } from '../../src/transport/turn-ledger.js';

/** The transition table of `TurnLedger`, row by row (the class comment is the spec). */
const TABLE: Record<TurnEntryState, Record<Exclude<TurnEntryEvent['type'], 'answered'>, TurnEntryState>> = {
  sent: {
    refused: 'failed',
    started: 'started',
    completed: 'completed',
    stopped: 'stopped',
    failed: 'failed',
  },
  stored: {
    refused: 'stored',
    started: 'started',
    completed: 'completed',
    stopped: 'stopped',
    failed: 'failed',
  },
  started: {
    refused: 'started',
    started: 'started',
    completed: 'completed',
    stopped: 'stopped',
    failed: 'failed',
  },
  completed: {
    refused: 'completed',
    started: 'completed',
    completed: 'completed',
    stopped: 'completed',
    failed: 'completed',
  },
  stopped: {
    refused: 'stopped',
    started: 'stopped',
    completed: 'stopped',
    stopped: 'stopped',
    failed: 'stopped',
  },
  failed: { refused: 'failed', started: 'failed', completed: 'failed', stopped: 'failed', failed: 'failed' },
};

/** An entry of `ledger` in `state`, reached by events from `sent`. */
function entryIn(ledger: TurnLedger, state: TurnEntryState) {
  const entry = ledger.open('message', { partId: 'p' });
  if (state === 'stored') ledger.move(entry, { type: 'answered', seq: 1 });
  else if (state !== 'sent') ledger.move(entry, { type: state === 'failed' ? 'failed' : state });
  expect(entry.state).toBe(state);
  return entry;
}

describe('TurnLedger', () => {
  for (const [from, row] of Object.entries(TABLE) as [TurnEntryState, (typeof TABLE)['sent']][]) {
    for (const [event, to] of Object.entries(row) as [keyof typeof row, TurnEntryState][]) {
      it(`${from} + ${event} → ${to}`, () => {
        const ledger = new TurnLedger(createSessionStore('c'));
        const entry = entryIn(ledger, from);
        ledger.move(entry, { type: event } as TurnEntryEvent);
        expect(entry.state).toBe(to);
      });
    }
    it(`${from} + answered keeps the seq${from === 'sent' ? ' and is stored' : ''}`, () => {
      const ledger = new TurnLedger(createSessionStore('c'));
      const entry = entryIn(ledger, from);
      ledger.move(entry, { type: 'answered', seq: 7 });
      expect(entry.seq).toBe(7);
      expect(entry.state).toBe(from === 'sent' ? 'stored' : from);
    });
  }

  it('starts with the found entry; each turn that goes live is current until a newer one does', () => {
    const ledger = new TurnLedger(createSessionStore('c'));
    const found = ledger.current;
    expect(found).toMatchObject({ kind: 'found', generation: 0, state: 'stored', answer: undefined });
    const send = ledger.open('message', { partId: 'p1', awaited: true });
    expect(send).toMatchObject({ generation: 1, state: 'sent', partId: 'p1' });
    expect(ledger.isCurrent(send)).toBe(true);
    const queued = ledger.open('queued', { seq: 4 });
    expect(queued).toMatchObject({ generation: 2, state: 'stored', seq: 4, answer: undefined });
    expect(ledger.isCurrent(send)).toBe(false);
  });

  it('an awaited entry’s answer settles once its append is answered or fails', async () => {
    const ledger = new TurnLedger(createSessionStore('c'));
    const ok = ledger.open('action', { awaited: true });
    ledger.answer(ok, { ok: true, seq: 3 });
    await expect(ok.answer).resolves.toEqual({ ok: true, seq: 3 });
    expect(ok).toMatchObject({ state: 'stored', seq: 3 });
    const refused = ledger.open('message', { awaited: true });
    const error = new Error('refused');
    ledger.answer(refused, { ok: false, error });
    await expect(refused.answer).resolves.toEqual({ ok: false, error });
    expect(refused.state).toBe('sent'); // the caller says how it failed (refused, or after a reply began)
  });

  it('the stop in flight belongs to the turn that was current: a newer turn is not stopping', () => {
    const ledger = new TurnLedger(createSessionStore('c'));
    const first = ledger.open('message');
    first.stop = Promise.resolve();
    expect(ledger.stopping).toBe(true);
    ledger.open('message');
    expect(ledger.stopping).toBe(false);
  });

  it('the latest stopped send is found until the marks are cleared', () => {
    const ledger = new TurnLedger(createSessionStore('c'));
    const first = ledger.open('message');
    first.stoppedBefore = { inSeq: 2 };
    const second = ledger.open('message');
    expect(ledger.stoppedSend()).toBe(first);
    second.stoppedBefore = { inSeq: 3 };
    expect(ledger.stoppedSend()).toBe(second);
    ledger.clearStoppedSends();
    expect(ledger.stoppedSend()).toBeUndefined();
  });

  it('keeps a bounded number of entries', () => {
    const ledger = new TurnLedger(createSessionStore('c'));
    const first = ledger.open('message');
    first.stoppedBefore = { inSeq: 0 };
    for (let index = 0; index < 20; index++) ledger.open('message');
    expect(ledger.current.generation).toBe(21);
    expect(ledger.stoppedSend()).toBeUndefined(); // the first entry is long gone
  });

  describe('queued actions', () => {
    it('behind a live turn they wait in the store (persisted), each current in turn once the one before is over', () => {
      const store = createSessionStore('c');
      const ledger = new TurnLedger(store);
      store.setState({ turnLive: true, turnStartCursor: 3, lastEventId: 5 });
      ledger.queue(7);
      ledger.queue(undefined);
      expect(store.getState().queuedTurns).toEqual([7, undefined]);
      ledger.promote(20, 6); // the live turn is still live: nothing moves
      expect(store.getState().queuedTurns).toHaveLength(2);
      store.setState({ turnLive: false, turnStartCursor: undefined });
      ledger.promote(20, 6);
      expect(store.getState()).toMatchObject({
        turnLive: true,
        turnStored: true,
        turnStartCursor: 20,
        turnInSeq: 7,
        turnPriorInSeq: 6,
        queuedTurns: [undefined],
      });
      expect(ledger.current).toMatchObject({ kind: 'queued', seq: 7, state: 'stored' });
      store.setState({ turnLive: false });
      ledger.promote(30, 7);
      expect(store.getState()).toMatchObject({ turnLive: true, turnStartCursor: 30, queuedTurns: [] });
      // Without its seq, the prior seq says nothing: the edge rules attribute it.
      expect(store.getState().turnPriorInSeq).toBeUndefined();
    });

    it('with no live turn an action is current at once, from the cursor; a closed chat queues nothing', () => {
      const store = createSessionStore('c');
      const ledger = new TurnLedger(store);
      store.setState({ lastEventId: 12 });
      ledger.queue(4);
      expect(store.getState()).toMatchObject({
        turnLive: true,
        turnStartCursor: 12,
        turnInSeq: 4,
        queuedTurns: [],
      });
      const closed = createSessionStore('d');
      closed.setState({ closed: true, turnLive: true });
      new TurnLedger(closed).queue(4);
      expect(closed.getState().queuedTurns).toEqual([]);
    });

    it('is bounded, and cleared at once', () => {
      const store = createSessionStore('c');
      const ledger = new TurnLedger(store);
      store.setState({ turnLive: true });
      for (let seq = 0; seq < 40; seq++) ledger.queue(seq);
      expect(store.getState().queuedTurns).toHaveLength(16);
      ledger.clearQueue();
      expect(store.getState().queuedTurns).toEqual([]);
    });
  });

  describe('the live mark, written by the transitions', () => {
    it('goLive takes it; stored names the seq while current; a newer turn keeps it', () => {
      const store = createSessionStore('c');
      const ledger = new TurnLedger(store);
      const action = ledger.goLive('action', { startCursor: 4, priorSeq: 1 });
      expect(store.getState()).toMatchObject({
        turnLive: true,
        turnStored: false,
        turnStartCursor: 4,
        turnInSeq: undefined,
        turnPriorInSeq: 1,
      });
      const send = ledger.goLive('message', { partId: 'p', startCursor: 9, priorSeq: undefined });
      ledger.stored(action, 2); // a late answer of the older turn: the mark stays the newer one's
      expect(store.getState()).toMatchObject({ turnStored: false, turnInSeq: undefined, turnStartCursor: 9 });
      expect(action).toMatchObject({ state: 'stored', seq: 2 });
      ledger.stored(send, 3);
      expect(store.getState()).toMatchObject({ turnStored: true, turnInSeq: 3 });
    });

    it('a send that went out behind a live turn only marks the live turn stored', () => {
      const store = createSessionStore('c');
      const ledger = new TurnLedger(store);
      store.setState({ turnLive: true, turnStored: false, turnInSeq: undefined });
      const behind = ledger.open('message', { partId: 'p' });
      ledger.stored(behind, 5);
      expect(store.getState()).toMatchObject({ turnStored: true, turnInSeq: undefined });
    });

    it('notStored gives the mark back unless the reply began; stopStored ends the current turn only', () => {
      const store = createSessionStore('c');
      const ledger = new TurnLedger(store);
      const refused = ledger.goLive('message', { startCursor: 7, priorSeq: undefined });
      ledger.notStored(refused, new Error('400'), false, 2);
      expect(store.getState()).toMatchObject({ turnLive: false, turnStartCursor: 2 });
      expect(refused.state).toBe('failed');
      const begun = ledger.goLive('message', { startCursor: 7, priorSeq: undefined });
      ledger.notStored(begun, new Error('network'), true, 2);
      expect(store.getState()).toMatchObject({ turnLive: true, turnStartCursor: 7 });
      expect(begun.state).toBe('started');
      const newer = ledger.goLive('action', { startCursor: 8, priorSeq: undefined });
      ledger.stopStored(begun); // the stop of the older turn: the newer one stays live
      expect(begun.state).toBe('stopped');
      expect(store.getState().turnLive).toBe(true);
      ledger.stopStored(newer);
      expect(store.getState()).toMatchObject({
        turnLive: false,
        turnStored: false,
        turnStartCursor: undefined,
      });
    });
  });

  it('markStopped writes the persisted stopped mark once, and clears it', () => {
    const store = createSessionStore('c');
    const ledger = new TurnLedger(store);
    const writes: unknown[] = [];
    store.subscribe((next, previous) => {
      if (next.stoppedTurn !== previous.stoppedTurn) writes.push(next.stoppedTurn);
    });
    ledger.markStopped('started');
    ledger.markStopped('started');
    ledger.markStopped(undefined);
    expect(writes).toEqual(['started', undefined]);
  });

  it('over: a turn read to its end leaves the chat not live, or the next queued action live', () => {
    const store = createSessionStore('c');
    const ledger = new TurnLedger(store);
    store.setState({ turnLive: true, turnStartCursor: 3 });
    ledger.over(10, 2);
    expect(store.getState()).toMatchObject({ turnLive: false, turnStartCursor: undefined });
    store.setState({ turnLive: true, turnStartCursor: 11 });
    ledger.queue(5);
    ledger.over(20, 4);
    expect(store.getState()).toMatchObject({
      turnLive: true,
      turnStartCursor: 20,
      turnInSeq: 5,
      queuedTurns: [],
    });
  });
});
