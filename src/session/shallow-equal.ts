/**
 * True when both values are identical, or plain objects / arrays whose own entries are
 * identical one level deep. The default equality of `useSessionState`, so a selector may
 * return a fresh `{ a, b }` object on every call without causing a render.
 */
export function shallowEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  if (keysA.length !== keysB.length) return false;
  const recordA = a as Record<string, unknown>;
  const recordB = b as Record<string, unknown>;
  for (const key of keysA) {
    if (!Object.hasOwn(recordB, key) || !Object.is(recordA[key], recordB[key])) return false;
  }
  return true;
}
