import { describe, expect, it } from 'vitest';
import { formatNumber, markdownTable, median, percentile, ratio, rotate } from '../../bench/stats.js';

describe('bench statistics', () => {
  it('median of odd, even and empty lists, whatever the order', () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it('ratio refuses a zero or missing denominator', () => {
    expect(ratio(3, 2)).toBe(1.5);
    expect(ratio(3, 0)).toBeNaN();
    expect(ratio(3, Number.NaN)).toBeNaN();
  });

  it('rotate gives every variant every position across runs', () => {
    expect(rotate(['a', 'b', 'c'], 0)).toEqual(['a', 'b', 'c']);
    expect(rotate(['a', 'b', 'c'], 1)).toEqual(['b', 'c', 'a']);
    expect(rotate(['a', 'b', 'c'], 5)).toEqual(['c', 'a', 'b']);
    expect(rotate([], 3)).toEqual([]);
  });

  it('never prints a missing figure as a number', () => {
    expect(formatNumber(Number.NaN)).toBe('n/a');
    expect(formatNumber(1234.5, 1)).toBe('1,234.5');
    expect(markdownTable(['a', 'b'], [['1', '2']])).toBe('| a | b |\n| --- | --- |\n| 1 | 2 |');
  });

  it('percentile takes the nearest rank, whatever the order', () => {
    const values = Array.from({ length: 100 }, (_, index) => 100 - index);
    expect(percentile(values, 0.95)).toBe(95);
    expect(percentile(values, 0.99)).toBe(99);
    expect(percentile([7], 0.99)).toBe(7);
    expect(percentile([], 0.5)).toBeNaN();
  });
});
