import type { UIMessageChunk } from 'ai';
import { isDurableChatError } from 'durable-chat';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClientVariant, loadVariant, userMessage } from '../../bench/clients/client-variant.js';
import { floorResumingTurn, floorTurn } from '../../bench/clients/floor-client.js';
import { type FixtureServer, type ServedTurnSpec, startFixtureServer } from '../../bench/fixture-server.js';
import { buildDeltas, chatIdFor, expectedReply, type TurnSpec } from '../../bench/fixture-turn.js';
import { createSession } from '../../bench/session-setup.js';
import { createCollector, drain, verifyChunks } from '../../bench/verify-turn.js';

const turns: ServedTurnSpec[] = [
  { name: 'b1', deltas: 300, batchSize: 1 },
  { name: 'b7', deltas: 300, batchSize: 7 },
  { name: 'b100', deltas: 1_000, batchSize: 100 },
  { name: 'b100-backlog', deltas: 1_000, batchSize: 100, tail: 'end' },
  { name: 'cut-destroy', deltas: 400, batchSize: 1, cutAfterSeq: 150, cutMode: 'destroy' },
  { name: 'cut-error', deltas: 400, batchSize: 10, cutAfterSeq: 155, cutMode: 'error-event' },
];

let server: FixtureServer;
let counter = 0;

beforeAll(async () => {
  server = await startFixtureServer(turns);
});
afterAll(async () => {
  await server.close();
});

async function contextFor(spec: TurnSpec) {
  const chatId = chatIdFor(spec.name, `test-${++counter}`);
  const session = await createSession(server.url, chatId);
  return { baseUrl: server.url, chatId, token: session.publicAccessToken, message: userMessage('hello') };
}

function specNamed(name: string): ServedTurnSpec {
  const spec = turns.find((candidate) => candidate.name === name);
  expect(spec).toBeDefined();
  return spec as ServedTurnSpec;
}

describe('fixture server + floor client', () => {
  for (const name of ['b1', 'b7', 'b100', 'b100-backlog']) {
    it(`streams the exact turn in batches (${name})`, async () => {
      const spec = specNamed(name);
      const collector = createCollector();
      await floorTurn(await contextFor(spec), collector.add);
      const expected = expectedReply(spec);
      verifyChunks(name, expected, collector);
      expect(collector.deltas).toHaveLength(spec.deltas);
      // Multibyte characters and JSON escapes make it through both encodings.
      expect(expected.text).toMatch(/["\\\n]/);
    });
  }

  it('waits for the append before streaming, as the live service does', async () => {
    const spec = specNamed('b1');
    const context = await contextFor(spec);
    const response = await fetch(`${server.url}/realtime/v1/sessions/${context.chatId}/out`, {
      headers: { authorization: `Bearer ${context.token}`, accept: 'text/event-stream' },
      signal: AbortSignal.timeout(2_000),
    });
    expect(response.headers.get('x-stream-version')).toBe('v2');
    const reader = response.body?.getReader();
    const early = await Promise.race([
      reader?.read().then(() => 'data'),
      new Promise((resolve) => setTimeout(() => resolve('nothing yet'), 100)),
    ]);
    expect(early).toBe('nothing yet');
    await reader?.cancel();
  });

  it('cuts the first connection after the record and resumes from Last-Event-ID', async () => {
    for (const name of ['cut-destroy', 'cut-error']) {
      const spec = specNamed(name);
      const context = await contextFor(spec);
      const collector = createCollector();
      await floorResumingTurn(context, collector.add);
      verifyChunks(name, expectedReply(spec), collector);
      expect(server.stats(context.chatId)?.outCursors).toEqual([null, String(spec.cutAfterSeq)]);
    }
  });

  it('a read without resume fails on the cut instead of reporting a short reply', async () => {
    const context = await contextFor(specNamed('cut-destroy'));
    const error = await floorTurn(context, () => undefined).catch((caught: unknown) => caught);
    expect(isDurableChatError(error) && error.code).toBe('UNEXPECTED_RESPONSE');
  });

  it('rejects requests the protocol rejects', async () => {
    const base = `${server.url}/realtime/v1/sessions/b1--rejects`;
    const noToken = await fetch(`${base}/in/append`, { method: 'POST', body: '{"kind":"stop"}' });
    expect(noToken.status).toBe(401);
    const notSse = await fetch(`${base}/out`, { headers: { authorization: 'Bearer t' } });
    expect(notSse.status).toBe(406);
    const notChunk = await fetch(`${base}/in/append`, {
      method: 'POST',
      headers: { authorization: 'Bearer t' },
      body: '{"kind":"nope"}',
    });
    expect(notChunk.status).toBe(400);
    const noExternalId = await fetch(`${server.url}/api/v1/sessions`, { method: 'POST', body: '{}' });
    expect(noExternalId.status).toBe(400);
  });
});

describe('the fixture check', () => {
  const spec: TurnSpec = { name: 'check', deltas: 20, batchSize: 1 };
  const expected = expectedReply(spec);
  const exact = (): UIMessageChunk[] => [
    { type: 'start' },
    { type: 'start-step' },
    { type: 'text-start', id: 't' },
    ...buildDeltas(spec.deltas, 42).map((delta): UIMessageChunk => ({ type: 'text-delta', id: 't', delta })),
    { type: 'text-end', id: 't' },
    { type: 'finish-step' },
    { type: 'finish' },
  ];
  const verify = (chunks: UIMessageChunk[]): unknown => {
    const collector = createCollector();
    for (const chunk of chunks) collector.add(chunk);
    try {
      verifyChunks('unit', expected, collector);
      return undefined;
    } catch (error) {
      return error;
    }
  };

  it('accepts exactly the expected reply', () => {
    expect(verify(exact())).toBeUndefined();
  });

  it('fails loudly on a lost, repeated or changed delta, or a missing finish', () => {
    const chunks = exact();
    const delta = chunks[5];
    const lost = chunks.filter((_, index) => index !== 5);
    const repeated = [...chunks.slice(0, 5), ...chunks.slice(5, 6), ...chunks.slice(5)];
    const changed = chunks.map((chunk) => (chunk === delta ? { ...chunk, delta: '#' } : chunk));
    const noFinish = chunks.slice(0, -1);
    for (const broken of [lost, repeated, changed, noFinish]) {
      const error = verify(broken);
      expect(isDurableChatError(error) && error.code).toBe('UNEXPECTED_RESPONSE');
    }
  });
});

describe('every client variant reads the fixture exactly through its stream', () => {
  const variants: ClientVariant[] = [];
  afterAll(() => {
    for (const variant of variants) variant.dispose?.();
  });

  for (const name of ['durable-chat', 'trigger', 'floor-stream'] as const) {
    it(`${name}: batched, live-shape and resumed turns`, async () => {
      const variant = await loadVariant(name);
      variants.push(variant);
      for (const turn of ['b100', 'b100-backlog', 'b1', 'cut-destroy', 'cut-error']) {
        const spec = specNamed(turn);
        const context = await contextFor(spec);
        const collector = createCollector();
        await drain(await variant.send(context), collector);
        verifyChunks(`${name}/${turn}`, expectedReply(spec), collector);
        if (spec.cutAfterSeq !== undefined) {
          expect(server.stats(context.chatId)?.outCursors.slice(0, 2)).toEqual([
            null,
            String(spec.cutAfterSeq),
          ]);
        }
      }
    });
  }
});
