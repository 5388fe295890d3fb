import { describe, expect, it } from 'vitest';
import {
  type CoordinatorEvent,
  type CoordinatorPhase,
  nextCoordinatorPhase,
  type PendingClaim,
} from '../../src/session/coordinator-phase.js';

// Every cell of the table in `nextCoordinatorPhase`'s comment, written out again: a change to
// the function that the table does not say (or the other way round) fails here.
const held = () => {};
const won = () => {};
const idle: CoordinatorPhase = { type: 'idle' };
const owning: CoordinatorPhase = { type: 'owning', letGo: held };
const disposed: CoordinatorPhase = { type: 'disposed' };
const claim = (id: number, at: number, lost = false): PendingClaim => ({ id, at, lost });
const claiming = (...claims: PendingClaim[]): CoordinatorPhase => ({ type: 'claiming', claims });

/** Claim 1 (at 100) and claim 2 (at 200) in flight, claim 2 already lost. */
const two = claiming(claim(1, 100), claim(2, 200, true));

const EVENTS: Record<string, CoordinatorEvent> = {
  'claim 3 at 300': { type: 'claim', id: 3, at: 300 },
  ownerHeard: { type: 'ownerHeard' },
  'rivalClaim at 150': { type: 'rivalClaim', at: 150, winsTie: false },
  'rivalClaim at 100, wins the tie': { type: 'rivalClaim', at: 100, winsTie: true },
  'rivalClaim at 100, loses the tie': { type: 'rivalClaim', at: 100, winsTie: false },
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
    {
      ...unchanged(idle),
      'claim 3 at 300': claiming(claim(3, 300)),
      granted: { type: 'owning', letGo: won },
      dispose: disposed,
    },
  ],
  [
    'claiming (two claims)',
    two,
    {
      ...unchanged(two),
      'claim 3 at 300': claiming(claim(1, 100), claim(2, 200, true), claim(3, 300)),
      ownerHeard: claiming(claim(1, 100, true), claim(2, 200, true)),
      'rivalClaim at 150': claiming(claim(1, 100), claim(2, 200, true)),
      'rivalClaim at 100, wins the tie': claiming(claim(1, 100, true), claim(2, 200, true)),
      'rivalClaim at 100, loses the tie': claiming(claim(1, 100), claim(2, 200, true)),
      'windowEnded 1': { type: 'owning', letGo: won },
      'windowEnded 2': claiming(claim(1, 100)),
      dispose: disposed,
    },
  ],
  [
    'claiming (one claim, lost)',
    claiming(claim(2, 200, true)),
    {
      ...unchanged(claiming(claim(2, 200, true))),
      'claim 3 at 300': claiming(claim(2, 200, true), claim(3, 300)),
      'windowEnded 2': idle,
      dispose: disposed,
    },
  ],
  [
    'claiming (one claim, outranked by an earlier rival)',
    claiming(claim(2, 200)),
    {
      ...unchanged(claiming(claim(2, 200))),
      'claim 3 at 300': claiming(claim(2, 200), claim(3, 300)),
      ownerHeard: claiming(claim(2, 200, true)),
      'rivalClaim at 150': claiming(claim(2, 200, true)),
      'rivalClaim at 100, wins the tie': claiming(claim(2, 200, true)),
      'rivalClaim at 100, loses the tie': claiming(claim(2, 200, true)),
      'windowEnded 2': { type: 'owning', letGo: won },
      dispose: disposed,
    },
  ],
  ['owning', owning, { ...unchanged(owning), release: idle, dispose: disposed }],
  ['disposed', disposed, unchanged(disposed)],
];

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
