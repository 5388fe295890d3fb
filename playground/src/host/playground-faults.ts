import { ValidationError } from 'durable-chat';
import type { DevServerApp } from 'durable-chat/dev-server';
import { FAULT_NAMES, type FaultName } from '../shared/fault-names.js';
import type { StreamBreaker } from './stream-breaker.js';

/** Checks the body of `POST /playground/faults`: `{ fault }`. */
export function parseFaultName(body: unknown): FaultName {
  const { fault } = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  if (typeof fault !== 'string' || !FAULT_NAMES.includes(fault as FaultName)) {
    throw new ValidationError({ field: 'fault', message: `fault: one of ${FAULT_NAMES.join(', ')}` });
  }
  return fault as FaultName;
}

/** How many chunks of the next turn stream before its run crashes. */
export const CRASH_AFTER_CHUNKS = 6;

/**
 * Breaks the local setup on purpose. The playground is one visitor's sandbox, so every
 * fault hits all of its chats: the `.out` streams open right now, every token minted so
 * far, the next turn's run. Returns what happened, for the page's event log.
 */
export function applyFault(
  fault: FaultName,
  target: { devServer: DevServerApp; breaker: StreamBreaker },
): string {
  switch (fault) {
    case 'drop-connection': {
      const count = target.breaker.drop();
      return `dropped ${count} open .out connection${count === 1 ? '' : 's'}`;
    }
    case 'expire-token':
      target.devServer.faults.expireTokens();
      return 'every session token issued so far is now refused (401)';
    case 'crash-run':
      target.devServer.faults.crashMidTurn({ afterChunks: CRASH_AFTER_CHUNKS });
      return `the next turn's run crashes after ${CRASH_AFTER_CHUNKS} chunks`;
  }
}
