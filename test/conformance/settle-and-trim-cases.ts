import { describe, expect, it } from 'vitest';
import { COMMAND_TRIM, HEADER } from '../../src/protocol/index.js';
import { seqNums } from './support/read-out.js';
import { type GetContext, sleep } from './support/suite-context.js';
import { findTurn } from './support/turn.js';

/** Trims may take up to a minute in production; the dev target says how long it takes. */
const TRIM_TEST_TIMEOUT_MS = 180_000;

export function describeSettleAndTrim(context: GetContext): void {
  describe('.out peek mode and trims', () => {
    it('peek on a settled stream: X-Session-Settled: true, drains the residual records, closes quickly', async () => {
      const chat = await context().openChat();
      const { turn } = await chat.send('settle');
      const peek = await chat.read({ peek: true, timeoutSeconds: 60, maxMs: 15_000 });
      expect(peek.status).toBe(200);
      expect(peek.headers.get(HEADER.sessionSettled)).toBe('true');
      expect(peek.ending).toBe('server-closed');
      // "Closes in about 1 s": far below the 60 s long-poll deadline asked for.
      expect(peek.elapsedMs).toBeLessThan(5_000);
      expect(seqNums(peek)).toContain(turn.turnComplete.seqNum);
    });

    it('peek mid-turn does not settle: the stream runs on to the turn-complete', async (test) => {
      const { target } = context();
      const slow = target.options.slowTurnMetadata;
      if (slow === undefined) return test.skip('target has no slow-turn metadata (options.slowTurnMetadata)');
      const chat = await context().openChat();
      await chat.send('warm up');
      const append = await chat.append(chat.messageChunk('a slow reply', slow));
      expect(append.status, append.text).toBe(200);
      const started = await chat.read({
        lastEventId: chat.cursor,
        until: (progress) => progress.records.some((record) => record.kind === 'data'),
      });
      expect(findTurn(started.records), 'the slow turn ended before it could be peeked').toBeUndefined();
      const peek = await chat.read({
        lastEventId: Math.max(...seqNums(started)),
        peek: true,
        timeoutSeconds: 60,
        until: (progress) => findTurn(progress.records) !== undefined,
        maxMs: target.options.slowTurnMs * 3 + 10_000,
      });
      expect(peek.status).toBe(200);
      expect(peek.headers.get(HEADER.sessionSettled)).not.toBe('true');
      expect(peek.ending).toBe('until');
    });

    it(
      'a trim command follows each turn-complete, the first included; a trimmed cursor clamps forward; peek skips the trim',
      async () => {
        const { target } = context();
        const chat = await context().openChat();
        const first = await chat.send('turn one');
        const firstSeq = first.turn.records[0]?.seqNum ?? 0;
        const firstTrim = await chat.read({
          lastEventId: first.turn.turnComplete.seqNum,
          timeoutSeconds: 5,
          until: (progress) => progress.records.length > 0,
          maxMs: 10_000,
        });
        // "After each turn-complete": with nothing earlier to trim back to, it trims nothing.
        expect(firstTrim.records[0]?.kind, 'a trim command after the first turn-complete').toBe('command');
        expect(firstTrim.raw[0]?.headers).toEqual([['', COMMAND_TRIM]]);
        const second = await chat.send('turn two');
        const secondStart = second.turn.records.find(
          (record) => record.seqNum > first.turn.turnComplete.seqNum,
        );
        const waitMs = target.options.trimDelayMs + 5_000;

        const trimRead = await chat.read({
          lastEventId: second.turn.turnComplete.seqNum,
          timeoutSeconds: Math.ceil(waitMs / 1000),
          until: (progress) => progress.records.some((record) => record.kind === 'command'),
          maxMs: waitMs,
        });
        const index = trimRead.records.findIndex((record) => record.kind === 'command');
        expect(index, 'a trim command record after the turn-complete').toBeGreaterThanOrEqual(0);
        const command = trimRead.records[index];
        expect(command?.kind === 'command' && command.operation).toBe(COMMAND_TRIM);
        expect(trimRead.raw[index]?.headers).toEqual([['', COMMAND_TRIM]]);

        // The trim is eventually consistent: poll until turn one's start is gone.
        let firstSurviving = firstSeq;
        const deadline = Date.now() + waitMs;
        while (firstSurviving <= firstSeq && Date.now() < deadline) {
          const head = await chat.read({ until: (progress) => progress.records.length > 0 });
          firstSurviving = head.records[0]?.seqNum ?? firstSeq;
          if (firstSurviving <= firstSeq) await sleep(100);
        }
        expect(firstSurviving, 'turn one was trimmed').toBeGreaterThan(firstSeq);
        expect(firstSurviving).toBeLessThanOrEqual(secondStart?.seqNum ?? Number.POSITIVE_INFINITY);

        const clamped = await chat.read({
          lastEventId: firstSeq,
          until: (progress) => progress.records.length > 0,
        });
        expect(clamped.status).toBe(200);
        expect(clamped.records[0]?.seqNum).toBe(firstSurviving);

        const peek = await chat.read({ peek: true, timeoutSeconds: 60, maxMs: 15_000 });
        expect(peek.headers.get(HEADER.sessionSettled)).toBe('true');
        expect(peek.elapsedMs).toBeLessThan(5_000);
      },
      TRIM_TEST_TIMEOUT_MS,
    );
  });
}
