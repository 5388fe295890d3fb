import type { UIMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BenchChild, runWorkerJob, startFixtureChild } from '../../bench/child-process.js';
import { type ClientVariant, loadVariant, userMessage } from '../../bench/clients/client-variant.js';
import { type FixtureServer, type ServedTurnSpec, startFixtureServer } from '../../bench/fixture-server.js';
import { chatIdFor, expectedReply, followUpTurn } from '../../bench/fixture-turn.js';
import type { FollowUpJob, FollowUpResult } from '../../bench/jobs/follow-up-job.js';
import { createSession } from '../../bench/session-setup.js';
import { createCollector, drain, verifyChunks } from '../../bench/verify-turn.js';

const DELAY_MS = 50;
const turn: ServedTurnSpec = { name: 'follow', deltas: 30, batchSize: 1, followUps: true };

describe('the fixture server’s added delay per response', () => {
  let delayed: FixtureServer;
  let plain: FixtureServer;
  beforeAll(async () => {
    delayed = await startFixtureServer([turn], { responseDelayMs: DELAY_MS });
    plain = await startFixtureServer([turn]);
  });
  afterAll(async () => {
    await delayed.close();
    await plain.close();
  });

  async function timings(server: FixtureServer) {
    const chatId = chatIdFor(turn.name, `delay-${Math.random().toString(36).slice(2)}`);
    const session = await createSession(server.url, chatId);
    const base = `${server.url}/realtime/v1/sessions/${chatId}`;
    const auth = { authorization: `Bearer ${session.publicAccessToken}` };
    // A read opened first, then the append that starts the turn: when do the records arrive?
    const readSent = performance.now();
    const reading = fetch(`${base}/out`, { headers: { ...auth, accept: 'text/event-stream' } });
    const out = await reading;
    const headersMs = performance.now() - readSent;
    const appendSent = performance.now();
    const append = await fetch(`${base}/in/append`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'message', payload: { chatId, trigger: 'submit-message' } }),
    });
    const appendMs = performance.now() - appendSent;
    expect(await append.json()).toEqual({ ok: true, seq: 1 });
    const reader = out.body?.getReader();
    const firstBytes = await reader?.read();
    const recordsMs = performance.now() - appendSent;
    expect(firstBytes?.done).toBe(false);
    await reader?.cancel();
    return { headersMs, appendMs, recordsMs };
  }

  it('holds every response, JSON and SSE alike, at least the delay after its request', async () => {
    const created = performance.now();
    await createSession(delayed.url, chatIdFor(turn.name, 'delay-create'));
    expect(performance.now() - created).toBeGreaterThanOrEqual(DELAY_MS - 1);
    const measured = await timings(delayed);
    // Timers may fire a hair early against performance.now(); never a whole millisecond.
    expect(measured.headersMs).toBeGreaterThanOrEqual(DELAY_MS - 1);
    expect(measured.appendMs).toBeGreaterThanOrEqual(DELAY_MS - 1);
    // The records the append starts, on a read already open, come one round trip after it.
    expect(measured.recordsMs).toBeGreaterThanOrEqual(DELAY_MS - 1);
  });

  it('adds nothing by default', async () => {
    const measured = await timings(plain);
    // Loopback on a shared machine: far under the delay, with room for a busy moment.
    expect(Math.min(measured.headersMs, measured.appendMs)).toBeLessThan(DELAY_MS / 2);
  });
});

describe('a multi-turn chat on the fixture server', () => {
  let server: FixtureServer;
  const variants: ClientVariant[] = [];
  beforeAll(async () => {
    server = await startFixtureServer([turn], { responseDelayMs: 5 });
  });
  afterAll(async () => {
    for (const variant of variants) variant.dispose?.();
    await server.close();
  });

  it('gives each turn its own text, so a replayed turn fails the check', () => {
    const texts = [1, 2, 3].map((index) => expectedReply(followUpTurn(turn, index)).text);
    expect(new Set(texts).size).toBe(3);
    expect(expectedReply(followUpTurn(turn, 1))).toEqual(expectedReply(turn));
  });

  for (const name of ['durable-chat', 'trigger', 'floor', 'floor-overlap'] as const) {
    it(`${name}: three turns in one chat, each reply exactly its turn’s`, async () => {
      const variant = await loadVariant(name, { followUps: true });
      variants.push(variant);
      const chatId = chatIdFor(turn.name, `${name}-${Math.random().toString(36).slice(2)}`);
      const session = await createSession(server.url, chatId);
      const history: UIMessage[] = [];
      for (let index = 1; index <= 3; index++) {
        const message = userMessage(`turn ${index}`);
        const collector = createCollector();
        const context = {
          baseUrl: server.url,
          chatId,
          token: session.publicAccessToken,
          message,
          history: [...history],
        };
        await drain(await variant.send(context), collector);
        const expected = expectedReply(followUpTurn(turn, index));
        verifyChunks(`${name}/turn ${index}`, expected, collector);
        history.push(message, {
          id: `a-${index}`,
          role: 'assistant',
          parts: [{ type: 'text', text: expected.text }],
        });
      }
      expect(server.stats(chatId)?.appends).toBe(3);
    });
  }
});

describe('the follow-up job', () => {
  let server: { url: string; child: BenchChild };
  beforeAll(async () => {
    server = await startFixtureChild([turn], { responseDelayMs: DELAY_MS });
  }, 30_000);
  afterAll(async () => {
    await server.child.stop();
  });

  it('times turn 1 and turn 3 of every client, each reply checked, in a fresh process', async () => {
    for (const variant of ['durable-chat', 'trigger', 'floor-overlap'] as const) {
      const job: FollowUpJob = {
        kind: 'follow-up',
        variant,
        baseUrl: server.url,
        fixtureTurn: turn,
        turns: 3,
        pauseMs: 10,
        warmups: 0,
        runs: 2,
      };
      const result = await runWorkerJob<FollowUpResult>(job);
      expect(result.firstChunkMs, variant).toHaveLength(3);
      for (const samples of result.firstChunkMs) {
        expect(samples, variant).toHaveLength(2);
        // Every first chunk needs the append to reach the server: at least one round trip.
        for (const ms of samples) expect(ms, variant).toBeGreaterThanOrEqual(DELAY_MS - 1);
      }
    }
  }, 60_000);

  it('fails loudly when a turn’s reply is not exactly that turn’s', async () => {
    // The worker expects another seed's text than the server streams: a wrong answer.
    const job: FollowUpJob = {
      kind: 'follow-up',
      variant: 'floor-overlap',
      baseUrl: server.url,
      fixtureTurn: { ...turn, seed: 7 },
      turns: 3,
      pauseMs: 0,
      warmups: 0,
      runs: 1,
    };
    await expect(runWorkerJob(job)).rejects.toThrow(/fixture check failed/);
  }, 30_000);
});
