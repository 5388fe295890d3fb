import { describe, expect, it } from 'vitest';
import { HEADER, readTokenClaims, runIdFromScopes } from '../../src/protocol/index.js';
import type { ConformanceFaults } from './support/conformance-target.js';
import { currentRunIdEventually } from './support/current-run-id.js';
import type { GetContext } from './support/suite-context.js';
import { hasContent } from './support/turn.js';

/** Wire-notes behaviours a server shows only when something goes wrong, driven by the target's faults. */
export function describeFaults(context: GetContext): void {
  function faultsOr(skip: (note: string) => never): ConformanceFaults {
    const { options } = context().target;
    if (options.supportsFaults !== true || options.faults === undefined)
      skip('target does not support faults');
    return options.faults;
  }

  describe('under faults', () => {
    it('429 carries x-ratelimit-* (reset in epoch ms); the same X-Part-Id succeeds after', async (test) => {
      const faults = faultsOr(test.skip);
      const chat = await context().openChat();
      await faults.rateLimitNextAppend();
      const limited = await chat.append(chat.messageChunk('hi'), { partId: 'rate-limited-1' });
      expect(limited.status, limited.text).toBe(429);
      expect(limited.body?.ok).toBe(false);
      expect(typeof limited.body?.error).toBe('string');
      for (const name of [HEADER.rateLimitLimit, HEADER.rateLimitRemaining, HEADER.rateLimitReset]) {
        expect(Number.isFinite(Number(limited.headers.get(name) ?? 'x')), name).toBe(true);
      }
      // Milliseconds: a reset in seconds would be ~1000x smaller than now in ms.
      expect(Number(limited.headers.get(HEADER.rateLimitReset))).toBeGreaterThan(Date.now() - 60_000);
      const retry = await chat.append(chat.messageChunk('hi'), { partId: 'rate-limited-1' });
      expect(retry.status, retry.text).toBe(200);
      expect(hasContent(await chat.awaitTurn())).toBe(true);
    });

    it('500 is a transient append failure: ok false, and a retry with the same X-Part-Id is stored once', async (test) => {
      const faults = faultsOr(test.skip);
      if (faults.failNextAppend === undefined) return test.skip('target cannot fail an append');
      const chat = await context().openChat();
      await faults.failNextAppend();
      const failed = await chat.append(chat.messageChunk('retry me'), { partId: 'transient-1' });
      expect(failed.status, failed.text).toBe(500);
      expect(failed.body?.ok).toBe(false);
      expect(typeof failed.body?.error).toBe('string');
      const retry = await chat.append(chat.messageChunk('retry me'), { partId: 'transient-1' });
      expect(retry.status, retry.text).toBe(200);
      expect(hasContent(await chat.awaitTurn())).toBe(true);
      const after = await chat.read({ lastEventId: chat.cursor, timeoutSeconds: 1, maxMs: 5_000 });
      expect(after.records.filter((record) => record.kind === 'data')).toEqual([]);
    });

    it('an error event closes .out without [DONE]; reading again from the cursor works', async (test) => {
      const faults = faultsOr(test.skip);
      if (faults.errorOnNextRead === undefined) return test.skip('target cannot fault a read');
      const chat = await context().openChat();
      const { turn } = await chat.send('before the error');
      await faults.errorOnNextRead();
      const broken = await chat.read({
        lastEventId: turn.records[0]?.seqNum,
        timeoutSeconds: 5,
        maxMs: 8_000,
      });
      expect(broken.status).toBe(200);
      expect(broken.events.some((event) => event.type === 'error')).toBe(true);
      expect(broken.done).toBe(false);
      // Closed by the server, cleanly or by cutting the connection: either way, no [DONE].
      expect(['server-closed', 'dropped']).toContain(broken.ending);
      const again = await chat.read({
        lastEventId: turn.records[0]?.seqNum,
        until: (progress) => progress.records.some((record) => record.seqNum === turn.turnComplete.seqNum),
      });
      expect(again.ending).toBe('until');
    });

    it('after a run crashes mid-turn, the next append is answered by a new run', async (test) => {
      const faults = faultsOr(test.skip);
      if (faults.crashNextTurn === undefined) return test.skip('target cannot crash a run');
      const chat = await context().openChat();
      await faults.crashNextTurn(chat.id);
      const doomed = await chat.append(chat.messageChunk('this turn crashes part way through'));
      expect(doomed.status, doomed.text).toBe(200);
      const partial = await chat.read({
        until: (progress) => progress.records.some((record) => record.kind === 'data'),
      });
      expect(partial.ending).toBe('until');
      // "Run gone": the row the create returns names no live run, the liveness source a client asks.
      expect(await currentRunIdEventually(chat, (runId) => runId === null)).toBeNull();
      const append = await chat.append(chat.messageChunk('after the crash'));
      expect(append.status, append.text).toBe(200);
      const turn = await chat.awaitTurn({ appendSeq: append.body?.seq as number | undefined });
      expect(hasContent(turn)).toBe(true);
      const runId = runIdFromScopes(readTokenClaims(turn.turnComplete.publicAccessToken ?? '')?.scopes);
      expect(runId).toMatch(/^run_/);
      expect(runId).not.toBe(chat.created.runId);
    });
  });
}
