export const REDACTED = '[redacted]';

/** Replaces every occurrence of the secret in text that came from elsewhere (a proxy's echo). */
export function redactSecret(text: string, secret: string): string {
  return secret === '' ? text : text.split(secret).join(REDACTED);
}

/**
 * Redacts every string (keys too) of a parsed JSON value. Needed after parsing as well as
 * before: JSON may write the secret with escapes (`\u0073k_…`) that only parsing turns back
 * into the key. Iterative, so a deeply nested body cannot overflow the stack.
 */
export function redactParsed(value: unknown, secret: string): unknown {
  if (secret === '') return value;
  const root = { value };
  const stack: Array<Record<string, unknown> | unknown[]> = [root];
  while (stack.length > 0) {
    const container = stack.pop() as Record<string, unknown>;
    for (const key of Object.keys(container)) {
      const item = container[key];
      if (typeof item === 'string') container[key] = redactSecret(item, secret);
      else if (typeof item === 'object' && item !== null) stack.push(item as Record<string, unknown>);
      const safeKey = redactSecret(key, secret);
      if (safeKey !== key) {
        container[safeKey] = container[key];
        delete container[key];
      }
    }
  }
  return root.value;
}

// A bearer token is one run of visible ASCII: a CR, LF, NUL or other control character would
// make the HTTP client reject the header with a message that quotes the whole value.
const SECRET_KEY_SHAPE = /^[\x21-\x7E]+$/;

export function isWellFormedSecretKey(value: string): boolean {
  return SECRET_KEY_SHAPE.test(value);
}
