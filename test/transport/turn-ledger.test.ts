import { describe, expect, it } from 'vitest';
import { createSessionStore, type SessionStore } from '../../src/client/session-store.js';
import { moveTurn, type TurnEvent, type TurnState, turnsFromLegacy } from '../../src/client/turn-records.js';
import { TurnLedger } from '../../src/transport/turn-ledger.js';

type Moving = Exclude<TurnEvent['type'], 'answered' | 'promoted'>;

/** The transition table of `TurnRecord`, row by row (its doc comment is the spec). */
const TABLE: Record<TurnState, Record<Moving | 'promoted', TurnState>> = {
  sent: {
    refused: 'failed',
    started: 'started',
    read: 'read',
    over: 'over',
    stopped: 'stopped',
    promoted: 'sent',
  },
  stored: {
    refused: 'stored',
    started: 'started',
    read: 'read',
    over: 'over',
    stopped: 'stopped',
    promoted: 'stored',
  },
  started: {
    refused: 'started',
    started: 'started',
    read: 'read',
    over: 'over',
    stopped: 'stopped',
    promoted: 'started',
  },
  read: {
    refused: 'read',
    started: 'read',
    read: 'read',
    over: 'over',
    stopped: 'stopped',
    promoted: 'read',
  },
  queued: {
    refused: 'queued',
    started: 'queued',
    read: 'queued',
    over: 'queued',
    stopped: 'queued',
    promoted: 'stored',
  },
  over: { refused: 'over', started: 'over', read: 'over', over: 'over', stopped: 'over', promoted: 'over' },
  stopped: {
    refused: 'stopped',
    started: 'stopped',
    read: 'stopped',
    over: 'stopped',
    stopped: 'stopped',
    promoted: 'stopped',
  },
  failed: {
    refused: 'failed',
    started: 'failed',
    read: 'failed',
    over: 'failed',
    stopped: 'failed',
    promoted: 'failed',
  },
};

function event(type: Moving | 'promoted'): TurnEvent {
  return type === 'promoted' ? { type, startCursor: 3, priorSeq: undefined } : { type };
}

/** A live turn in `store`, as a record or another tab would put it there. */
function live(store: SessionStore, startCursor: number | undefined, stored = true): void {
  store.setState({
    turns: turnsFromLegacy({ turnLive: true, turnStored: stored, turnStartCursor: startCursor }),
  });
}

describe('TurnRecord transitions', () => {
  for (const [from, row] of Object.entries(TABLE) as [TurnState, (typeof TABLE)['sent']][]) {
    for (const [type, to] of Object.entries(row) as [Moving | 'promoted', TurnState][]) {
      it(`${from} + ${type} → ${to}`, () => {
        expect(moveTurn({ id: 0, kind: 'message', state: from }, event(type)).state).toBe(to);
      });
    }
    it(`${from} + answered keeps the seq${from === 'sent' ? ' and is stored' : ''}, and drops the body`, () => {
      const moved = moveTurn(
        { id: 0, kind: 'message', state: from, partId: 'p', body: '{}' },
        { type: 'answered', seq: 7 },
      );
      expect(moved).toEqual({
        id: 0,
        kind: 'message',
        state: from === 'sent' ? 'stored' : from,
        partId: 'p',
        seq: 7,
      });
    });
  }
});

describe('TurnLedger', () => {
  it('each turn that goes live is current until a newer one does; entries live in the store', () => {
    const store = createSessionStore('c');
    const ledger = new TurnLedger(store);
    expect(ledger.current.id).toBe(-1); // no turn yet
    const send = ledger.open('message', { partId: 'p1', awaited: true });
    expect(send).toMatchObject({ id: 0, state: 'sent', partId: 'p1' });
    expect(ledger.isCurrent(send)).toBe(true);
    const queued = ledger.open('queued', { seq: 4 });
    expect(queued).toMatchObject({ id: 1, state: 'queued', seq: 4, answer: undefined });
    expect(ledger.isCurrent(send)).toBe(true); // a queued action is not current before it goes live
    expect(store.getState().turns).toEqual([
      { id: 0, kind: 'message', state: 'sent', partId: 'p1' },
      { id: 1, kind: 'queued', state: 'queued', seq: 4 },
    ]);
  });

  it('restored entries are current and count on: a reload goes on from the record', () => {
    const store = createSessionStore('c');
    live(store, 5);
    const ledger = new TurnLedger(store);
    expect(ledger.current).toMatchObject({ id: 0, kind: 'found', state: 'stored' });
    expect(ledger.open('message').id).toBe(1);
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

  it('keeps a bounded number of entries: every live one, and 8 before them', () => {
    const store = createSessionStore('c');
    const ledger = new TurnLedger(store);
    const first = ledger.goLive('message', { startCursor: 1, priorSeq: undefined });
    for (let index = 0; index < 20; index++) {
      const done = ledger.open('message');
      ledger.move(done, { type: 'over' });
    }
    const { turns } = store.getState();
    expect(turns).toHaveLength(9);
    expect(turns[0]).toMatchObject({ id: first.id, state: 'sent' }); // still live
    expect(ledger.current.id).toBe(20);
    expect(first.state).toBe('sent');
  });

  describe('queued actions', () => {
    it('behind a live turn they wait in the ledger (persisted), each live in turn once the one before is over', () => {
      const store = createSessionStore('c');
      const ledger = new TurnLedger(store);
      store.setState({ lastEventId: 5 });
      live(store, 3);
      ledger.queue(7);
      ledger.queue(undefined);
      expect(store.getState().queuedTurns).toEqual([7, undefined]);
      ledger.promote(20, 6); // the live turn is still live: nothing moves
      expect(store.getState().queuedTurns).toHaveLength(2);
      ledger.over(20, 6);
      expect(store.getState()).toMatchObject({
        turnLive: true,
        turnStored: true,
        turnStartCursor: 20,
        turnInSeq: 7,
        turnPriorInSeq: 6,
        queuedTurns: [undefined],
      });
      ledger.over(30, 7);
      expect(store.getState()).toMatchObject({ turnLive: true, turnStartCursor: 30, queuedTurns: [] });
      // Without its seq, the prior seq says nothing: the edge rules attribute it.
      expect(store.getState().turnPriorInSeq).toBeUndefined();
    });

    it('with no live turn an action is live at once, from the cursor; a closed chat queues nothing', () => {
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
      closed.setState({ closed: true });
      new TurnLedger(closed).queue(4);
      expect(closed.getState().turns).toEqual([]);
    });

    it('is bounded, and cleared at once', () => {
      const store = createSessionStore('c');
      const ledger = new TurnLedger(store);
      live(store, 0);
      for (let seq = 0; seq < 40; seq++) ledger.queue(seq);
      expect(store.getState().queuedTurns).toHaveLength(16);
      ledger.clearQueue();
      expect(store.getState().queuedTurns).toEqual([]);
    });
  });

  describe('the live mark, read from the entries', () => {
    it('is never written by hand: a write of it is ignored', () => {
      const store = createSessionStore('c');
      store.setState({ turnLive: true, turnStartCursor: 4, lastEventId: 9 } as never);
      expect(store.getState()).toMatchObject({ turnLive: false, turnStartCursor: undefined, lastEventId: 9 });
    });

    it('goLive takes it; the answer names the seq; a newer turn keeps it', () => {
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
      action.stop = Promise.resolve(); // its stop is on its way: a send now takes the mark
      const send = ledger.goLive('message', {
        partId: 'p',
        body: '{"x":1}',
        startCursor: 9,
        priorSeq: undefined,
      });
      expect(action.state).toBe('stopped');
      expect(store.getState().pendingAppend).toEqual({ partId: 'p', body: '{"x":1}' });
      ledger.stored(action, 2); // a late answer of the older turn: the mark stays the newer one's
      expect(store.getState()).toMatchObject({ turnStored: false, turnInSeq: undefined, turnStartCursor: 9 });
      expect(action).toMatchObject({ state: 'stopped', seq: 2 });
      ledger.stored(send, 3);
      expect(store.getState()).toMatchObject({ turnStored: true, turnInSeq: 3, pendingAppend: undefined });
    });

    it('a send that went out behind a live turn marks the live turn stored', () => {
      const store = createSessionStore('c');
      const ledger = new TurnLedger(store);
      live(store, 2, false);
      const behind = ledger.open('message', { partId: 'p' });
      ledger.stored(behind, 5);
      expect(store.getState()).toMatchObject({ turnStored: true, turnInSeq: undefined, turnStartCursor: 2 });
    });

    it('notStored ends the turn unless the reply began; stopStored ends the current turn only', () => {
      const store = createSessionStore('c');
      const ledger = new TurnLedger(store);
      const refused = ledger.goLive('message', { startCursor: 7, priorSeq: undefined });
      ledger.notStored(refused, new Error('400'), false);
      expect(store.getState()).toMatchObject({ turnLive: false, turnStartCursor: undefined });
      expect(refused.state).toBe('failed');
      const begun = ledger.goLive('message', { startCursor: 7, priorSeq: undefined });
      ledger.notStored(begun, new Error('network'), true);
      expect(store.getState()).toMatchObject({ turnLive: true, turnStartCursor: 7 });
      expect(begun.state).toBe('started');
      begun.stop = Promise.resolve();
      const newer = ledger.goLive('action', { startCursor: 8, priorSeq: undefined });
      ledger.stopStored(begun); // the stop of the older turn: the newer one stays live
      expect(begun.state).toBe('stopped');
      expect(store.getState()).toMatchObject({ turnLive: true, turnStartCursor: 8 });
      ledger.stopStored(newer);
      expect(store.getState()).toMatchObject({
        turnLive: false,
        turnStored: false,
        turnStartCursor: undefined,
      });
    });
  });

  it('markStopped writes the persisted stopped mark on the current entry once, and clears it', () => {
    const store = createSessionStore('c');
    const ledger = new TurnLedger(store);
    const writes: unknown[] = [];
    store.subscribe((next, previous) => {
      if (next.stoppedTurn !== previous.stoppedTurn) writes.push(next.stoppedTurn);
    });
    const send = ledger.open('message');
    ledger.markStopped('started');
    ledger.markStopped('started');
    expect(send.record.stopMark).toBe('started');
    ledger.markStopped(undefined);
    expect(writes).toEqual(['started', undefined]);
  });

  it('over: a turn read to its end leaves the chat not live, or the next queued action live', () => {
    const store = createSessionStore('c');
    const ledger = new TurnLedger(store);
    live(store, 3);
    ledger.over(10, 2);
    expect(store.getState()).toMatchObject({ turnLive: false, turnStartCursor: undefined });
    const send = ledger.goLive('message', { startCursor: 11, priorSeq: undefined });
    ledger.move(send, { type: 'read' }); // its turn-complete read: live until its consumer has every chunk
    expect(store.getState().turnLive).toBe(true);
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
