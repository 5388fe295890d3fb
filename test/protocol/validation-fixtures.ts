import { expect } from 'vitest';
import { isDurableChatError, ValidationError } from '../../src/errors/index.js';

/** Runs `run`, which must throw a ValidationError for `field`, checks its shape and returns it. */
export function rejects(run: () => void, field: string): ValidationError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    const validation = error as ValidationError;
    expect(validation.code).toBe('INVALID_INPUT');
    expect(validation.retryable).toBe(false);
    expect(validation.field).toBe(field);
    expect(validation.message.startsWith(`${field}: `)).toBe(true);
    expect(isDurableChatError(validation)).toBe(true);
    return validation;
  }
  throw new Error(`expected ${field} to be rejected`);
}

/** `count` distinct tags: `t0`, `t1`, ... */
export const tags = (count: number) => Array.from({ length: count }, (_, index) => `t${index}`);
