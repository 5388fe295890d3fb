import { describe, expect, it } from 'vitest';
import {
  nextRelayPhase,
  type RelayEvent,
  type RelayPhase,
  STREAMING,
} from '../../src/session/relay-phase.js';

// Every cell of the table in `nextRelayPhase`'s comment, written out again: a change to the
// function that the table does not say (or the other way round) fails here.
const error = new Error('the source failed');
const streaming: RelayPhase = { type: 'streaming' };
const failing: RelayPhase = { type: 'failing', error };
const parked: RelayPhase = { type: 'parked' };
const ended: RelayPhase = { type: 'ended' };

const EVENTS: Record<string, RelayEvent> = {
  'aborted, left': { type: 'aborted', left: true },
  aborted: { type: 'aborted', left: false },
  'failed, left': { type: 'failed', error, left: true, held: false },
  'failed, left and held': { type: 'failed', error, left: true, held: true },
  'failed, held': { type: 'failed', error, left: false, held: true },
  failed: { type: 'failed', error, left: false, held: false },
  done: { type: 'done' },
  cancelled: { type: 'cancelled' },
};

/** phase → event → the phase after it. */
const TABLE: [string, RelayPhase, Record<keyof typeof EVENTS, RelayPhase>][] = [
  [
    'streaming',
    streaming,
    {
      'aborted, left': parked,
      aborted: ended,
      'failed, left': parked,
      'failed, left and held': parked,
      'failed, held': failing,
      failed: ended,
      done: ended,
      cancelled: ended,
    },
  ],
  [
    'failing',
    failing,
    {
      'aborted, left': parked,
      aborted: ended,
      'failed, left': parked,
      'failed, left and held': parked,
      'failed, held': ended,
      failed: ended,
      done: failing,
      cancelled: ended,
    },
  ],
  ['parked', parked, Object.fromEntries(Object.keys(EVENTS).map((name) => [name, parked]))],
  ['ended', ended, Object.fromEntries(Object.keys(EVENTS).map((name) => [name, ended]))],
];

describe('RelayPhase: every move of the table', () => {
  it('a relay starts streaming', () => {
    expect(STREAMING).toEqual(streaming);
  });

  for (const [name, phase, row] of TABLE) {
    it(`${name}`, () => {
      for (const [eventName, event] of Object.entries(EVENTS))
        expect({ event: eventName, next: nextRelayPhase(phase, event) }).toEqual({
          event: eventName,
          next: row[eventName],
        });
    });
  }

  it('an event that leaves the phase as it is returns that very phase (the relay acts only on a move)', () => {
    for (const [, phase, row] of TABLE)
      for (const [eventName, event] of Object.entries(EVENTS))
        if (row[eventName] === phase) expect(nextRelayPhase(phase, event)).toBe(phase);
  });
});
