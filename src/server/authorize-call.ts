import { DurableChatError } from '../errors/durable-chat-error.js';
import { ValidationError } from '../errors/validation-error.js';

export type AuthorizeOutcome =
  | { kind: 'allowed' }
  | { kind: 'denied'; problem?: ValidationError }
  | { kind: 'timed-out'; error: DurableChatError };

/**
 * Calls the app's `authorize` with a deadline. Only `true` allows: a truthy `'false'`, `{}`
 * or `1` is an app bug that must deny (and be reported), never grant access to a chat.
 */
export async function callAuthorize(authorize: () => unknown, timeoutMs: number): Promise<AuthorizeOutcome> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), timeoutMs);
  });
  try {
    const answer = await Promise.race([Promise.resolve().then(authorize), deadline]);
    if (answer === TIMED_OUT) {
      const error = new DurableChatError({
        code: 'SERVER_ERROR',
        message: `authorize did not answer within ${timeoutMs} ms; the request was not allowed`,
        retryable: true,
      });
      return { kind: 'timed-out', error };
    }
    if (answer === true) return { kind: 'allowed' };
    if (answer === false) return { kind: 'denied' };
    const problem = new ValidationError({
      field: 'authorize',
      message: `authorize must return true or false; it returned ${describe(answer)}, so the request was denied`,
    });
    return { kind: 'denied', problem };
  } finally {
    clearTimeout(timer);
  }
}

const TIMED_OUT = Symbol('timed out');

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
