import { randomBytes } from 'node:crypto';
import { RUN_ID_PREFIX, SESSION_ID_PREFIX } from '../protocol/limits.js';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

// Random bytes are drawn from a pool: one system call per few hundred ids, not one per id
// (a fresh part id is made for every `.out` record, the hot path).
const POOL_SIZE = 8192;
let pool = randomBytes(POOL_SIZE);
let poolOffset = 0;

/** A random lower-case id body: friendly ids look like the service's (`session_…`, `run_…`). */
export function randomId(length = 20): string {
  if (poolOffset + length > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    poolOffset = 0;
  }
  let out = '';
  for (let index = 0; index < length; index++)
    out += ALPHABET[(pool[poolOffset + index] ?? 0) % ALPHABET.length];
  poolOffset += length;
  return out;
}

export function newSessionId(): string {
  return `${SESSION_ID_PREFIX}${randomId()}`;
}

export function newRunId(): string {
  return `${RUN_ID_PREFIX}${randomId()}`;
}

/** A fresh random id per data record, as production does (clients key on `seq_num`). */
export function newPartId(): string {
  return randomId(16);
}

export function newMessageId(): string {
  return `msg_${randomId(16)}`;
}
