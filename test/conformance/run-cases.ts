import { describe, expect, it } from 'vitest';
import { actionChunk, regenerateChunk, stopChunk, toolResponseChunk } from '../../src/protocol/index.js';
import { registerRunChangeCases } from './run-change-cases.js';
import type { ConformanceChat } from './support/conformance-chat.js';
import { type GetContext, sleep } from './support/suite-context.js';
import { findTurn, hasContent } from './support/turn.js';
import { expectTurnShape, runOf } from './support/turn-shape.js';

/** Sends a slow message and returns once its first data record is on `.out`. */
async function startSlowTurn(chat: ConformanceChat, slow: unknown): Promise<void> {
  const append = await chat.append(chat.messageChunk('please answer slowly', slow));
  expect(append.status, append.text).toBe(200);
  const started = await chat.read({
    lastEventId: chat.cursor,
    until: (progress) => progress.records.some((record) => record.kind === 'data'),
  });
  expect(started.ending).toBe('until');
  expect(findTurn(started.records), 'the slow turn ended before the first read').toBeUndefined();
}

export function describeRuns(context: GetContext): void {
  describe('runs and turns', () => {
    it('a turn streams start, text and finish data records, then turn-complete', async () => {
      const chat = await context().openChat();
      const { turn } = await chat.send('hello there');
      expectTurnShape(turn);
    });

    it('between turns the same run answers (read:runs unchanged)', async () => {
      const chat = await context().openChat();
      const first = await chat.send('one');
      const second = await chat.send('two');
      expect(runOf(first.turn.turnComplete.publicAccessToken)).toBe(chat.created.runId);
      expect(runOf(second.turn.turnComplete.publicAccessToken)).toBe(chat.created.runId);
    });

    it('after idleTimeoutInSeconds the run suspends; a new message resumes the same run', async () => {
      const chat = await context().openChat((body) => {
        body.triggerConfig.idleTimeoutInSeconds = 1;
        body.triggerConfig.basePayload.idleTimeoutInSeconds = 1;
      });
      await chat.send('before the idle timeout');
      await sleep(1_600);
      const { turn } = await chat.send('after the idle timeout');
      expectTurnShape(turn);
      expect(runOf(turn.turnComplete.publicAccessToken)).toBe(chat.created.runId);
    });

    it('stop ends a live turn with a turn-complete, well before the reply would end; then idle', async (test) => {
      const { target } = context();
      const slow = target.options.slowTurnMetadata;
      if (slow === undefined) return test.skip('target has no slow-turn metadata (options.slowTurnMetadata)');
      const chat = await context().openChat();
      await startSlowTurn(chat, slow);
      const stoppedAt = performance.now();
      const stop = await chat.append(stopChunk('user pressed stop'));
      expect(stop.status, stop.text).toBe(200);
      await chat.awaitTurn();
      expect(performance.now() - stoppedAt).toBeLessThan(target.options.slowTurnMs / 2);
      const { turn } = await chat.send('after the stop');
      expectTurnShape(turn);
    });

    it('regenerate-message streams a new reply', async () => {
      const chat = await context().openChat();
      await chat.send('say it again');
      const append = await chat.append(
        regenerateChunk({ chatId: chat.externalId, metadata: context().target.options.metadata }),
      );
      expect(append.status, append.text).toBe(200);
      const turn = await chat.awaitTurn({ appendSeq: append.body?.seq as number | undefined });
      expectTurnShape(turn);
    });

    it('an action fires the handler and its stream reaches .out', async (test) => {
      const { target } = context();
      if (target.options.action === undefined) return test.skip('target has no action (options.action)');
      const chat = await context().openChat();
      await chat.send('hello');
      const append = await chat.append(
        actionChunk({
          chatId: chat.externalId,
          action: target.options.action,
          metadata: target.options.metadata,
        }),
      );
      expect(append.status, append.text).toBe(200);
      const turn = await chat.awaitTurn({ appendSeq: append.body?.seq as number | undefined });
      expect(hasContent(turn)).toBe(true);
    });

    it('an action failing the action schema: 200, then a turn-complete with no content', async () => {
      const { target } = context();
      const chat = await context().openChat();
      await chat.send('hello');
      const append = await chat.append(
        actionChunk({
          chatId: chat.externalId,
          action: { type: 'conformance-no-such-action', at: Date.now() },
          metadata: target.options.metadata,
        }),
      );
      expect(append.status, append.text).toBe(200);
      const turn = await chat.awaitTurn({ appendSeq: append.body?.seq as number | undefined });
      expect(hasContent(turn)).toBe(false);
    });

    it("metadata failing the agent's schema: 200, then a turn-complete with no content; valid metadata still works", async (test) => {
      const { target } = context();
      const invalid = target.options.invalidMetadata;
      if (invalid === undefined) return test.skip('target has no invalid metadata (options.invalidMetadata)');
      const chat = await context().openChat();
      const { append, turn } = await chat.send('rejected', invalid);
      expect(append.body?.ok).toBe(true);
      expect(hasContent(turn)).toBe(false);
      const retry = await chat.send('accepted');
      expectTurnShape(retry.turn);
    });

    it('tool approval and tool output appends are accepted (200)', async () => {
      const { target } = context();
      const chat = await context().openChat();
      for (const part of [
        { state: 'approval-responded', approval: { id: 'approval-1', approved: true } },
        { state: 'output-available', output: { answer: 42 } },
      ]) {
        const message = {
          id: 'assistant-message-1',
          role: 'assistant' as const,
          parts: [{ type: 'tool-lookup', toolCallId: 'call-1', input: {}, ...part }],
        };
        const chunk = toolResponseChunk({
          chatId: chat.externalId,
          message: message as never,
          metadata: target.options.metadata,
        });
        const append = await chat.append(chunk);
        expect(append.status, append.text).toBe(200);
        expect(append.body?.ok).toBe(true);
      }
    });

    registerRunChangeCases(context);
  });
}
