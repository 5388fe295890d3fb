import { assert } from 'vitest';
import type { ConformanceChat } from './conformance-chat.js';
import type { ResolvedConformanceTarget } from './conformance-target.js';
import type { ProtocolClient } from './protocol-client.js';

/** What every case reads: the resolved target and a client for it. */
export interface SuiteContext {
  target: ResolvedConformanceTarget;
  client: ProtocolClient;
  /** Creates a fresh session (201 asserted) with the target's defaults. */
  openChat: (mutate?: Parameters<typeof ConformanceChat.open>[2]) => Promise<ConformanceChat>;
}

/** Cases register at import time but the target resolves in `beforeAll`: they read it late. */
export type GetContext = () => SuiteContext;

export function lateContext(): { get: GetContext; set: (context: SuiteContext) => void } {
  let current: SuiteContext | undefined;
  return {
    get: () => {
      assert(current !== undefined, 'the conformance target did not resolve (see beforeAll)');
      return current;
    },
    set: (context) => {
      current = context;
    },
  };
}

/** Real time, only for waits the protocol itself defines (idle timeouts, settle windows). */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
