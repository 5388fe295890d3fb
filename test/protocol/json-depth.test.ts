import { describe, expect, it } from 'vitest';
import { jsonTextTooDeep, jsonValueTooDeep } from '../../src/protocol/json-depth.js';

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('JSON depth checks', () => {
  it('count arrays and objects, not brackets inside strings (escaped quotes included)', () => {
    expect(jsonTextTooDeep(nested(8), 8)).toBe(false);
    expect(jsonTextTooDeep(`[${nested(8)}]`, 8)).toBe(true);
    const noisy = JSON.stringify({ text: `\\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[${'x'.repeat(40)}` });
    expect(jsonTextTooDeep(noisy, 2)).toBe(false);
    expect(jsonTextTooDeep(`{"a":{"b":{"c":"${'['.repeat(30)}"}}}`, 2)).toBe(true);
  });

  it('agree on parsed values, iteratively, and stop on cycles', () => {
    expect(jsonValueTooDeep(JSON.parse(nested(8)), 8)).toBe(false);
    expect(jsonValueTooDeep(JSON.parse(nested(100_000)))).toBe(true);
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(jsonValueTooDeep(cycle)).toBe(false);
  });
});
