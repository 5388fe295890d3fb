import type { SessionStore } from './session-store.js';
import { boundTurns, endLive, isLiveTurn, nextTurnId, type TurnRecord } from './turn-records.js';

/**
 * The ledger's transitions for writers that hold only the chat's store (a turn stream, the
 * React hooks, the client): each changes `turns`, from which the live mark is read.
 */

/** Writes `turns` when they changed (bounded). */
export function writeTurns(store: SessionStore, turns: readonly TurnRecord[]): void {
  if (turns !== store.getState().turns) store.setState({ turns: boundTurns(turns) });
}

/** The chat's live turn ended for this page, however (`over`), or by its stored stop. */
export function endLiveTurn(store: SessionStore, event: 'over' | 'stopped' = 'over'): void {
  writeTurns(store, endLive(store.getState().turns, event));
}

/**
 * A turn this page did not append is live (another tab's or device's, a steering message's):
 * a `found` entry, read from `startCursor`. Nothing changes while a turn is live already.
 */
export function foundLiveTurn(
  store: SessionStore,
  mark: {
    startCursor: number | undefined;
    stored: boolean;
    seq?: number;
    priorSeq?: number;
    partId?: string;
  },
): void {
  const { turns } = store.getState();
  if (turns.some(isLiveTurn)) return;
  const found: TurnRecord = {
    id: nextTurnId(turns),
    kind: 'found',
    state: mark.stored ? 'stored' : 'sent',
    startCursor: mark.startCursor,
    seq: mark.seq,
    priorSeq: mark.priorSeq,
    // The other tab's append, when it names it: a record written later still saying it is unsent is not news.
    ...(mark.partId === undefined ? {} : { partId: mark.partId }),
  };
  writeTurns(store, [...turns, found]);
}

/** What a turn stream learns of the live turn's reply: where it starts, the inputs before it. */
export function updateLiveTurn(
  store: SessionStore,
  change: { startCursor?: number | undefined; priorSeq?: number | undefined; seq?: number | undefined },
): void {
  const { turns } = store.getState();
  const index = turns.findIndex(isLiveTurn);
  if (index < 0) return;
  const live = turns[index] as TurnRecord;
  const next = { ...live, ...change };
  const same = (Object.keys(change) as (keyof typeof change)[]).every((key) => live[key] === next[key]);
  if (same) return;
  writeTurns(
    store,
    turns.map((record, at) => (at === index ? next : record)),
  );
}

/**
 * This page stopped the newest turn and never saw it end (`mark`), or nothing it stopped is
 * pending any more (`undefined`). Without an entry to carry it, a `found` one does.
 */
export function markStoppedTurn(store: SessionStore, mark: 'started' | 'unstarted' | undefined): void {
  const { turns } = store.getState();
  let last = -1;
  turns.forEach((record, index) => {
    if (record.state !== 'queued') last = index;
  });
  let changed = false;
  const next = turns.map((record, index) => {
    const wanted = index === last ? mark : undefined;
    if (record.stopMark === wanted) return record;
    changed = true;
    return { ...record, stopMark: wanted };
  });
  if (last < 0 && mark !== undefined) {
    writeTurns(store, [...turns, { id: nextTurnId(turns), kind: 'found', state: 'over', stopMark: mark }]);
    return;
  }
  if (changed) writeTurns(store, next);
}
