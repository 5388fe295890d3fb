import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type DevServer, echoAgent, startDevServer } from '../../src/dev-server/index.js';
import {
  chunkTypes,
  classify,
  createSession,
  dataChunks,
  eventually,
  openChat,
  readOut,
  replyText,
  sendText,
  turnCompletes,
  untilTurnCompletes,
} from './support/client.js';

// Faults that end or replace a turn's run: what each leaves on `.out` and on the session row.

let server: DevServer;
beforeAll(async () => {
  server = await startDevServer({ agents: [echoAgent], pingIntervalMs: 100, logger: { warn() {} } });
});
afterEach(() => server.faults.reset());
afterAll(() => server.close());

const slow = { delayMs: 20, repeat: 10 };

describe('currentRunId on the session row', () => {
  it('names the run while it streams and idles, and is null once the run ended', async () => {
    const c = await openChat(server, 'row-run-end');
    expect(server.inspect(c.chatId)?.row.currentRunId).toBe(c.runId);
    await sendText(server, c.chatId, c.token, c.chatId, 'slow', slow);
    await readOut(server, c.chatId, c.token, {
      until: (records) => chunkTypes(records).includes('text-delta'),
    });
    expect(server.inspect(c.chatId)).toMatchObject({
      run: { state: 'streaming' },
      row: { currentRunId: c.runId },
    });
    await sendText(server, c.chatId, c.token, c.chatId, '/end bye');
    await eventually(() => (server.inspect(c.chatId)?.run === null ? true : undefined));
    expect(server.inspect(c.chatId)?.row.currentRunId).toBeNull();
    // The create call reports it: the cached row, same runId, no run live.
    const cached = await createSession(server, { externalId: c.chatId });
    expect(cached.body).toMatchObject({ isCached: true, runId: c.runId, currentRunId: null });
  });
});

describe('faults.crashMidTurn({ afterChunks: 0 })', () => {
  it('crashes before the first chunk: nothing on .out, currentRunId null, the next append starts a continuation', async () => {
    const c = await openChat(server, 'crash-silent');
    server.faults.crashMidTurn({ afterChunks: 0, sessionId: c.chatId });
    await sendText(server, c.chatId, c.token, c.chatId, 'never answered');
    await eventually(() => (server.inspect(c.chatId)?.run === null ? true : undefined));
    expect(server.inspect(c.chatId)?.row.currentRunId).toBeNull();
    const silent = await readOut(server, c.chatId, c.token, { timeoutSeconds: 1 });
    expect(silent.ended).toBe('done');
    expect(silent.records).toEqual([]);
    expect((await createSession(server, { externalId: c.chatId })).body.currentRunId).toBeNull();

    await sendText(server, c.chatId, c.token, c.chatId, 'next');
    const info = server.inspect(c.chatId);
    expect(info?.runCount).toBe(2);
    expect(info?.row.currentRunId).toMatch(/^run_/);
    expect(info?.row.currentRunId).not.toBe(c.runId);
    const read = await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(1) });
    expect(replyText(read.records)).toBe('Echo: next');
  });
});

describe('faults.closeMidTurn()', () => {
  it('closes the session mid-turn: the run ends, .out keeps what was written and nothing more, later calls 409', async () => {
    const c = await openChat(server, 'close-mid-turn');
    server.faults.closeMidTurn({ afterChunks: 3, sessionId: c.chatId, reason: 'account deleted' });
    await sendText(server, c.chatId, c.token, c.chatId, 'a reply cut by a close', slow);
    await eventually(() => (server.inspect(c.chatId)?.row.closedAt ? true : undefined));
    const info = server.inspect(c.chatId);
    expect(info).toMatchObject({ run: null, row: { currentRunId: null, closedReason: 'account deleted' } });
    // Reads still work; the turn has no turn-complete and nothing follows its three chunks.
    const read = await readOut(server, c.chatId, c.token, { timeoutSeconds: 1 });
    expect(read.status).toBe(200);
    expect(chunkTypes(read.records)).toEqual(['start', 'start-step', 'text-start']);
    const later = await sendText(server, c.chatId, c.token, c.chatId, 'anyone?');
    expect(later.status).toBe(409);
    expect(await later.json()).toMatchObject({
      ok: false,
      code: 'session_closed',
      closedReason: 'account deleted',
    });
    expect((await createSession(server, { externalId: c.chatId })).status).toBe(409);
  });
});

describe('faults.upgradeMidTurn({ differentAnswer: true })', () => {
  it('the new run answers with other text, other text part ids and another message id', async () => {
    const c = await openChat(server, 'upgrade-diverge');
    server.faults.upgradeMidTurn({ afterChunks: 4, sessionId: c.chatId, differentAnswer: true });
    await sendText(server, c.chatId, c.token, c.chatId, 'abcdefghijklmnop');
    const read = await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(1) });
    const types = chunkTypes(read.records);
    const upgradeAt = types.indexOf('control:upgrade-required');
    expect(upgradeAt).toBe(4);
    const before = dataChunks(read.records.slice(0, upgradeAt));
    const after = dataChunks(read.records.slice(upgradeAt + 1));
    const idsOf = (chunks: typeof before, type: string) =>
      chunks.flatMap((chunk) => (chunk.type === type && 'id' in chunk ? [chunk.id] : []));
    const messageIdOf = (chunks: typeof before) => {
      const start = chunks.find((chunk) => chunk.type === 'start');
      return start?.type === 'start' ? start.messageId : undefined;
    };
    expect(idsOf(before, 'text-start')).toEqual(['text-0']);
    expect(idsOf(after, 'text-start')).toEqual(['text-0-v2']);
    expect(messageIdOf(after)).toEqual(expect.any(String));
    expect(messageIdOf(after)).not.toBe(messageIdOf(before));
    expect(replyText(read.records.slice(0, upgradeAt))).toBe('Echo: ab');
    const answer = replyText(read.records.slice(upgradeAt + 1));
    expect(answer).toBe('On second thought: Echo: abcdefghijklmnop');
    expect(answer.startsWith('Echo: ab')).toBe(false);
    expect(server.inspect(c.chatId)?.runCount).toBe(2);

    // Only the upgraded turn diverges: the next one is the agent's own answer again.
    await sendText(server, c.chatId, c.token, c.chatId, 'again');
    const next = await readOut(server, c.chatId, c.token, {
      lastEventId: String(read.records.at(-1)?.seq_num),
      until: untilTurnCompletes(1),
    });
    expect(replyText(next.records)).toBe('Echo: again');
    expect(idsOf(dataChunks(next.records), 'text-start')).toEqual(['text-0']);
  });

  it('without differentAnswer the new run repeats the answer, as before', async () => {
    const c = await openChat(server, 'upgrade-same');
    server.faults.upgradeMidTurn({ afterChunks: 4, sessionId: c.chatId });
    await sendText(server, c.chatId, c.token, c.chatId, 'abcdefghijklmnop');
    const read = await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(1) });
    expect(replyText(read.records)).toBe('Echo: abEcho: abcdefghijklmnop');
  });
});

describe('faults.holdAppendResponses()', () => {
  it('answers the append only after the whole turn, turn-complete included, is on .out', async () => {
    const c = await openChat(server, 'hold-append');
    server.faults.holdAppendResponses(1);
    const sent = await sendText(server, c.chatId, c.token, c.chatId, 'held until answered', slow);
    expect(await sent.json()).toEqual({ ok: true, seq: 0 });
    // Already on .out when the answer arrived: a reader that starts now finds the whole turn.
    expect(server.inspect(c.chatId)?.in.acknowledgedSeq).toBe(0);
    const read = await readOut(server, c.chatId, c.token, { timeoutSeconds: 1 });
    expect(turnCompletes(read.records)).toHaveLength(1);
    expect(replyText(read.records)).toBe(
      `Echo: ${Array.from({ length: 10 }, () => 'held until answered').join(' ')}`,
    );
    // Only one append was held.
    const started = Date.now();
    expect((await sendText(server, c.chatId, c.token, c.chatId, 'quick', slow)).status).toBe(200);
    expect(server.inspect(c.chatId)?.in.acknowledgedSeq).toBe(0);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('lets the answer go when the run dies before the turn completes', async () => {
    const c = await openChat(server, 'hold-crash');
    server.faults.holdAppendResponses(1);
    server.faults.crashMidTurn({ afterChunks: 2, sessionId: c.chatId });
    const sent = await sendText(server, c.chatId, c.token, c.chatId, 'crashes', slow);
    expect(await sent.json()).toEqual({ ok: true, seq: 0 });
    expect(server.inspect(c.chatId)?.run).toBeNull();
    const read = await readOut(server, c.chatId, c.token, { timeoutSeconds: 1 });
    expect(classify(read.records).some((record) => record.kind === 'control')).toBe(false);
  });
});
