import { describe, expect, it } from 'vitest';
import { nextTabPhase, type TabEvent, type TabPhase } from '../../src/session/tab-life.js';

// Every cell of the table in `nextTabPhase`'s comment, written out again: a change to the
// function that the table does not say (or the other way round) fails here.
const idle: TabPhase = { type: 'idle' };
const following: TabPhase = { type: 'following' };
const owning = (heldForTurn: boolean): TabPhase => ({ type: 'owning', heldForTurn });
const trailing: TabPhase = { type: 'trailing' };
const releasing = (heldForTurn: boolean): TabPhase => ({ type: 'releasing', heldForTurn });
const disposed: TabPhase = { type: 'disposed' };

const EVENTS: Record<string, TabEvent> = {
  announced: { type: 'announced' },
  granted: { type: 'granted' },
  hold: { type: 'hold' },
  trail: { type: 'trail' },
  ended: { type: 'ended' },
  settled: { type: 'settled' },
  'written (may release)': { type: 'written', mayRelease: true },
  'written (may not)': { type: 'written', mayRelease: false },
  dispose: { type: 'dispose' },
};

/** phase → event → the phase after it. */
const TABLE: [string, TabPhase, Record<keyof typeof EVENTS, TabPhase>][] = [
  [
    'idle',
    idle,
    {
      announced: following,
      granted: owning(false),
      hold: idle,
      trail: idle,
      ended: idle,
      settled: idle,
      'written (may release)': idle,
      'written (may not)': idle,
      dispose: disposed,
    },
  ],
  [
    'following',
    following,
    {
      announced: following,
      granted: owning(false),
      hold: following,
      trail: following,
      ended: idle,
      settled: following,
      'written (may release)': following,
      'written (may not)': following,
      dispose: disposed,
    },
  ],
  ...[false, true].map((held): [string, TabPhase, Record<string, TabPhase>] => [
    `owning (held ${held})`,
    owning(held),
    {
      announced: owning(held),
      granted: owning(held),
      hold: owning(true),
      trail: trailing,
      ended: owning(false),
      settled: releasing(held),
      'written (may release)': owning(held),
      'written (may not)': owning(held),
      dispose: disposed,
    },
  ]),
  ...[false, true].map((held): [string, TabPhase, Record<string, TabPhase>] => [
    `releasing (held ${held})`,
    releasing(held),
    {
      announced: releasing(held),
      granted: releasing(held),
      hold: releasing(true),
      trail: releasing(held),
      ended: releasing(false),
      settled: releasing(held),
      'written (may release)': idle,
      'written (may not)': owning(held),
      dispose: disposed,
    },
  ]),
  [
    'trailing',
    trailing,
    {
      announced: trailing,
      granted: owning(false),
      hold: trailing,
      trail: trailing,
      ended: idle,
      settled: trailing,
      'written (may release)': trailing,
      'written (may not)': trailing,
      dispose: disposed,
    },
  ],
  [
    'disposed',
    disposed,
    Object.fromEntries(Object.keys(EVENTS).map((name) => [name, disposed])) as Record<string, TabPhase>,
  ],
];

describe('TabPhase: every move of the table', () => {
  for (const [name, phase, row] of TABLE) {
    it(`${name}`, () => {
      for (const [eventName, event] of Object.entries(EVENTS))
        expect({ event: eventName, next: nextTabPhase(phase, event) }).toEqual({
          event: eventName,
          next: row[eventName],
        });
    });
  }
});
