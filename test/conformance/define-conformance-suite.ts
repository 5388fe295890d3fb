import { afterAll, beforeAll, describe, expect } from 'vitest';
import { describeAppend } from './append-cases.js';
import { describeCloseSession } from './close-session-cases.js';
import { describeCreateSession } from './create-session-cases.js';
import { describeFaults } from './fault-cases.js';
import { describeOutStream } from './out-stream-cases.js';
import { describeRuns } from './run-cases.js';
import { describeSettleAndTrim } from './settle-and-trim-cases.js';
import { ConformanceChat } from './support/conformance-chat.js';
import { type ConformanceTarget, resolveTarget } from './support/conformance-target.js';
import { ProtocolClient } from './support/protocol-client.js';
import { lateContext } from './support/suite-context.js';
import { describeTokens } from './token-cases.js';
import { describeTools } from './tool-cases.js';

export type {
  ConformanceFaults,
  ConformanceOptions,
  ConformanceTarget,
} from './support/conformance-target.js';

/**
 * Registers the session-protocol conformance suite against any server: the dev server in
 * process, or the production service from the environment. `target` runs in `beforeAll`,
 * so it may start a server first.
 */
export function defineConformanceSuite(target: () => ConformanceTarget | Promise<ConformanceTarget>): void {
  const context = lateContext();
  describe('session protocol conformance', () => {
    beforeAll(async () => {
      const resolved = resolveTarget(await target());
      const client = new ProtocolClient(resolved);
      context.set({
        target: resolved,
        client,
        openChat: (mutate) => ConformanceChat.open(resolved, client, mutate),
      });
    });
    // The target may be a shared, long-lived service: leave no session of ours open.
    afterAll(async () => {
      const { client } = context.get();
      const failures: string[] = [];
      for (const id of client.createdSessionIds) {
        const response = await client.closeSession(id, { reason: 'conformance suite cleanup' });
        if (response.status >= 300) failures.push(`${id}: HTTP ${response.status}`);
      }
      expect(failures, 'closing the sessions the suite created').toEqual([]);
    });
    describeCreateSession(context.get);
    describeCloseSession(context.get);
    describeAppend(context.get);
    describeOutStream(context.get);
    describeSettleAndTrim(context.get);
    describeTokens(context.get);
    describeRuns(context.get);
    describeTools(context.get);
    describeFaults(context.get);
  });
}
