import { describe, expect, it } from 'vitest';
import {
  MAX_CLOSE_REASON_LENGTH,
  MAX_SESSION_TAGS,
  validateCloseReason,
  validateExternalId,
  validateIdleTimeout,
  validateLastEventId,
  validateMaxAttempts,
  validatePartId,
  validateTags,
  validateTimeoutSeconds,
} from '../../src/protocol/index.js';
import { rejects, tags } from './validation-fixtures.js';

describe('field rules at and just past their bounds', () => {
  it.each([
    [
      'maxAttempts',
      validateMaxAttempts,
      'triggerConfig.maxAttempts',
      [1, 10],
      [0, 11, 1.5, -1, '5', Number.NaN, null],
    ],
    [
      'idleTimeoutInSeconds',
      validateIdleTimeout,
      'idleTimeoutInSeconds',
      [1, 3600],
      [0, 3601, 2.5, '30', Infinity],
    ],
    [
      'Timeout-Seconds',
      validateTimeoutSeconds,
      'Timeout-Seconds',
      [1, 60, 600],
      [0, 601, 0.5, '60', undefined],
    ],
    [
      'Last-Event-ID',
      validateLastEventId,
      'Last-Event-ID',
      [0, 1, Number.MAX_SAFE_INTEGER],
      [-1, 1.5, '12', '1,2,3', Number.NaN, Number.MAX_SAFE_INTEGER + 1, null],
    ],
  ] as const)('%s', (_name, validate, field, accepted, rejected) => {
    for (const value of accepted) expect(() => validate(value)).not.toThrow();
    for (const value of rejected) rejects(() => validate(value), field);
  });

  it('names the field it was given', () => {
    rejects(() => validateMaxAttempts(0, 'options.maxAttempts'), 'options.maxAttempts');
  });

  it('externalId: any string but one starting with session_', () => {
    for (const value of ['chat-1', 'session', 'Session_1', 'my_session_1', 'é😀']) {
      expect(() => validateExternalId(value)).not.toThrow();
    }
    const error = rejects(() => validateExternalId('session_abc'), 'externalId');
    expect(error.message).toContain('session_');
    rejects(() => validateExternalId(''), 'externalId');
    rejects(() => validateExternalId(42), 'externalId');
  });

  it(`tags: at most ${MAX_SESSION_TAGS} strings`, () => {
    expect(() => validateTags([])).not.toThrow();
    expect(() => validateTags(tags(10))).not.toThrow();
    expect(rejects(() => validateTags(tags(11)), 'tags').message).toContain('11');
    rejects(() => validateTags(['a', 1]), 'tags');
    rejects(() => validateTags('a,b'), 'tags');
  });

  it(`close reason: at most ${MAX_CLOSE_REASON_LENGTH} characters, optional`, () => {
    expect(() => validateCloseReason(undefined)).not.toThrow();
    expect(() => validateCloseReason('')).not.toThrow();
    expect(() => validateCloseReason('r'.repeat(256))).not.toThrow();
    rejects(() => validateCloseReason('r'.repeat(257)), 'reason');
    rejects(() => validateCloseReason(5), 'reason');
  });

  it('X-Part-Id: 1-64 printable ASCII characters', () => {
    expect(() => validatePartId('p'.repeat(64))).not.toThrow();
    expect(() => validatePartId('send-01J9Z:1')).not.toThrow();
    for (const value of ['p'.repeat(65), '', 'has space', 'é', 'tab\t', 7])
      rejects(() => validatePartId(value), 'X-Part-Id');
  });
});
