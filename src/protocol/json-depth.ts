/**
 * Deepest nesting of arrays and objects a record, an append or a route body may have. Real
 * chunks, messages and client data stay far below it; every recursive walk over JSON (ours,
 * `JSON.stringify`, the AI SDK's) runs out of stack some thousands of levels down, where a
 * crafted body would turn into a `RangeError` reported as anything but bad input.
 */
export const MAX_JSON_DEPTH = 256;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * True when JSON `text` nests deeper than `max`, read without parsing. Text shorter than
 * `2 * max` cannot (every level costs an opening and a closing character), so the short
 * records that make up most of a stream are never scanned.
 */
export function jsonTextTooDeep(text: string, max = MAX_JSON_DEPTH): boolean {
  if (text.length <= 2 * max) return false;
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === BACKSLASH) index++;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) inString = true;
    else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) depth--;
  }
  return false;
}

/** As `jsonTextTooDeep`, for a value already parsed or built in memory; iterative. */
export function jsonValueTooDeep(value: unknown, max = MAX_JSON_DEPTH): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const stack: Array<{ value: object; depth: number }> = [{ value, depth: 1 }];
  const seen = new Set<object>();
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop() as { value: object; depth: number };
    if (depth > max) return true;
    // A cycle is left to the serialiser, which names it; here it must only not loop.
    if (seen.has(current)) continue;
    seen.add(current);
    for (const item of Object.values(current)) {
      if (typeof item === 'object' && item !== null) stack.push({ value: item, depth: depth + 1 });
    }
  }
  return false;
}
