import { describe, expect, it } from 'vitest';
import {
  type CoordinatorEvent,
  type CoordinatorPhase,
  claimInRunning,
  nextCoordinatorPhase,
  type PendingClaim,
} from '../../src/session/coordinator-phase.js';

// Every cell of the table in `nextCoordinatorPhase`'s comment, written out again: a change to
// the function that the table does not say (or the other way round) fails here.
/** The hold of a phase that owns before the event. */
const held = () => {};
const idle: CoordinatorPhase = { type: 'idle' };
const owning = (...claims: PendingClaim[]): CoordinatorPhase => ({ type: 'owning', letGo: held, claims });
const won = () => {};
/** Owning through the hold the event brought (`won`: a claim's window or a grant), with `claims` still in flight. */
const wonBy = (...claims: PendingClaim[]): CoordinatorPhase => ({ type: 'owning', letGo: won, claims });
const disposed: CoordinatorPhase = { type: 'disposed' };
const claim = (id: number, at: number): PendingClaim => ({ id, at });
const claiming = (...claims: PendingClaim[]): CoordinatorPhase => ({ type: 'claiming', claims });

/** Claims 1 (at 100) and 2 (at 200) in flight. */
const two = claiming(claim(1, 100), claim(2, 200));

const EVENTS: Record<string, CoordinatorEvent> = {
  'claim 3 at 300': { type: 'claim', id: 3, at: 300 },
  ownerHeard: { type: 'ownerHeard' },
  'rivalClaim at 50': { type: 'rivalClaim', at: 50, winsTie: false },
  'rivalClaim at 150': { type: 'rivalClaim', at: 150, winsTie: false },
  'rivalClaim at 200, wins the tie': { type: 'rivalClaim', at: 200, winsTie: true },
  'rivalClaim at 200, loses the tie': { type: 'rivalClaim', at: 200, winsTie: false },
  'rivalClaim at 250': { type: 'rivalClaim', at: 250, winsTie: true },
  'windowEnded 1': { type: 'windowEnded', id: 1, letGo: won },
  'windowEnded 2': { type: 'windowEnded', id: 2, letGo: won },
  granted: { type: 'granted', letGo: won },
  release: { type: 'release' },
  dispose: { type: 'dispose' },
};

const unchanged = (phase: CoordinatorPhase) =>
  Object.fromEntries(Object.keys(EVENTS).map((name) => [name, phase])) as Record<string, CoordinatorPhase>;

/** phase → event → the phase after it. */
const TABLE: [string, CoordinatorPhase, Record<keyof typeof EVENTS, CoordinatorPhase>][] = [
  [
    'idle',
    idle,
    { ...unchanged(idle), 'claim 3 at 300': claiming(claim(3, 300)), granted: wonBy(), dispose: disposed },
  ],
  [
    'claiming (two claims)',
    two,
    {
      ...unchanged(two),
      'claim 3 at 300': claiming(claim(1, 100), claim(2, 200), claim(3, 300)),
      ownerHeard: idle,
      'rivalClaim at 50': idle,
      'rivalClaim at 150': claiming(claim(1, 100)),
      'rivalClaim at 200, wins the tie': claiming(claim(1, 100)),
      'windowEnded 1': wonBy(claim(2, 200)),
      'windowEnded 2': wonBy(claim(1, 100)),
      dispose: disposed,
    },
  ],
  [
    'claiming (claim 2 only: claim 1 lost)',
    claiming(claim(2, 200)),
    {
      ...unchanged(claiming(claim(2, 200))),
      'claim 3 at 300': claiming(claim(2, 200), claim(3, 300)),
      ownerHeard: idle,
      'rivalClaim at 50': idle,
      'rivalClaim at 150': idle,
      'rivalClaim at 200, wins the tie': idle,
      'windowEnded 2': wonBy(),
      dispose: disposed,
    },
  ],
  [
    'owning',
    owning(),
    { ...unchanged(owning()), 'claim 3 at 300': owning(claim(3, 300)), release: idle, dispose: disposed },
  ],
  [
    'owning (claims 1 and 2 still in flight)',
    owning(claim(1, 100), claim(2, 200)),
    {
      ...unchanged(owning(claim(1, 100), claim(2, 200))),
      'claim 3 at 300': owning(claim(1, 100), claim(2, 200), claim(3, 300)),
      ownerHeard: owning(),
      'rivalClaim at 50': owning(),
      'rivalClaim at 150': owning(claim(1, 100)),
      'rivalClaim at 200, wins the tie': owning(claim(1, 100)),
      'windowEnded 1': owning(claim(2, 200)),
      'windowEnded 2': owning(claim(1, 100)),
      release: claiming(claim(1, 100), claim(2, 200)),
      dispose: disposed,
    },
  ],
  ['disposed', disposed, unchanged(disposed)],
];

describe('claimInRunning', () => {
  it('is true for a claim of claiming or owning not lost yet, only', () => {
    expect(
      [idle, two, owning(claim(2, 200)), owning(), disposed].map((phase) => claimInRunning(phase, 2)),
    ).toEqual([false, true, true, false, false]);
  });
});

describe('CoordinatorPhase: every move of the table', () => {
  for (const [name, phase, row] of TABLE) {
    it(`${name}`, () => {
      for (const [eventName, event] of Object.entries(EVENTS)) {
        const next = nextCoordinatorPhase(phase, event);
        expect({ event: eventName, next }).toEqual({ event: eventName, next: row[eventName] });
        // The hold kept is the very one granted: the coordinator tells its own hold from another's by it.
        if (next.type === 'owning') expect(next.letGo).toBe((row[eventName] as typeof next).letGo);
      }
    });
  }
});
