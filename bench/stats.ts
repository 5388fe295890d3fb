/** Median of a non-empty list; NaN for an empty one (shown as "n/a", never as a number). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  const upper = sorted[middle] ?? Number.NaN;
  if (sorted.length % 2 === 1) return upper;
  return ((sorted[middle - 1] ?? Number.NaN) + upper) / 2;
}

export function ratio(numerator: number, denominator: number): number {
  return denominator > 0 ? numerator / denominator : Number.NaN;
}

/** Rotates the list by `shift`, so each repetition runs the variants in another order. */
export function rotate<T>(items: readonly T[], shift: number): T[] {
  if (items.length === 0) return [];
  const offset = shift % items.length;
  return [...items.slice(offset), ...items.slice(0, offset)];
}

export function formatNumber(value: number, digits = 1): string {
  if (!Number.isFinite(value)) return 'n/a';
  return value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

export function formatMiB(bytes: number): string {
  return Number.isFinite(bytes) ? `${formatNumber(bytes / 1024 / 1024, 1)} MiB` : 'n/a';
}

/** A Markdown table: the same text reads in a terminal and pastes into the docs. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** The value at `fraction` (0..1) of the sorted list, nearest rank; NaN for an empty list. */
export function percentile(values: readonly number[], fraction: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((left, right) => left - right);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}
