import { expect, it } from 'vitest';
import { currentRunIdEventually } from './support/current-run-id.js';
import type { GetContext } from './support/suite-context.js';
import { findTurn, hasContent } from './support/turn.js';
import { expectTurnShape, runOf } from './support/turn-shape.js';

/** A session outliving its run: end-of-run and upgrade, on one stream. */
export function registerRunChangeCases(context: GetContext): void {
  it('after the run exits, the next append starts a continuation run on the same stream and token', async (test) => {
    const { target } = context();
    const endRunText = target.options.endRunText;
    if (endRunText === undefined)
      return test.skip('target cannot be asked to end its run (options.endRunText)');
    const chat = await context().openChat();
    const originalToken = chat.created.publicAccessToken;
    const last = await chat.send(endRunText);
    // Once the run has exited, the row names no live run.
    expect(await currentRunIdEventually(chat, (runId) => runId === null)).toBeNull();
    // One subscription across the run change: no re-subscribe is needed.
    const across = chat.read({
      lastEventId: chat.cursor,
      until: (progress) => progress.records.some((record) => record.kind === 'data'),
    });
    const append = await chat.append(chat.messageChunk('second run'), { token: originalToken });
    expect(append.status, append.text).toBe(200);
    const turn = await chat.awaitTurn({ appendSeq: append.body?.seq as number | undefined });
    expectTurnShape(turn);
    const newRun = runOf(turn.turnComplete.publicAccessToken);
    expect(newRun).toMatch(/^run_/);
    expect(newRun).not.toBe(chat.created.runId);
    expect(turn.records[0]?.seqNum ?? -1).toBeGreaterThan(last.turn.turnComplete.seqNum);
    expect((await across).ending).toBe('until');
    expect(await currentRunIdEventually(chat, (runId) => runId === newRun)).toBe(newRun);
  });

  it('an upgrade request: upgrade-required on .out, then the new run streams the turn on the same subscription', async (test) => {
    const { target } = context();
    const upgradeText = target.options.upgradeText;
    if (upgradeText === undefined)
      return test.skip('target cannot be asked to upgrade (options.upgradeText)');
    const chat = await context().openChat();
    const append = await chat.append(chat.messageChunk(upgradeText));
    expect(append.status, append.text).toBe(200);
    const read = await chat.read({
      until: (progress) => findTurn(progress.records, append.body?.seq as number | undefined) !== undefined,
    });
    const index = read.records.findIndex(
      (record) => record.kind === 'control' && record.control === 'upgrade-required',
    );
    expect(index, 'an upgrade-required control record').toBeGreaterThanOrEqual(0);
    expect(read.raw[index]?.headers).toEqual([['trigger-control', 'upgrade-required']]);
    expect(read.raw[index]?.body).toBe('');
    const turn = findTurn(read.records.slice(index + 1), append.body?.seq as number | undefined);
    expect(turn && hasContent(turn), 'content from the new run after upgrade-required').toBe(true);
    const newRun = runOf(turn?.turnComplete.publicAccessToken);
    expect(newRun).toMatch(/^run_/);
    expect(newRun).not.toBe(chat.created.runId);
  });
}
