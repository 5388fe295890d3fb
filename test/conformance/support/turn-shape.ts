import { expect } from 'vitest';
import { readTokenClaims, runIdFromScopes } from '../../../src/protocol/index.js';
import type { Turn } from './turn.js';

/** The live run a token names in its `read:runs:` scope. */
export function runOf(token: string | undefined): string | undefined {
  return runIdFromScopes(readTokenClaims(token ?? '')?.scopes);
}

/** A normal assistant turn: start, steps around the text, finish, then turn-complete. */
export function expectTurnShape(turn: Turn): void {
  const types = turn.chunkTypes;
  expect(types[0], `chunk types: ${types.join(',')}`).toBe('start');
  expect(typeof (turn.data[0]?.chunk as { messageId?: unknown } | undefined)?.messageId).toBe('string');
  expect(types.at(-1)).toBe('finish');
  expect(turn.records.at(-1)).toBe(turn.turnComplete);
  const firstStart = types.indexOf('text-start');
  const firstDelta = types.indexOf('text-delta');
  expect(firstStart).toBeGreaterThanOrEqual(0);
  expect(firstDelta).toBeGreaterThan(firstStart);
  expect(types.lastIndexOf('text-end')).toBeGreaterThan(types.lastIndexOf('text-delta'));
  // Steps bracket the content: start-step before the first text, finish-step after the last.
  expect(types.indexOf('start-step')).toBeGreaterThan(0);
  expect(types.indexOf('start-step')).toBeLessThan(firstStart);
  expect(types.lastIndexOf('finish-step')).toBeGreaterThan(types.lastIndexOf('text-end'));
  expect(turn.text.length).toBeGreaterThan(0);
}
