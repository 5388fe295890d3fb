import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevServer } from '../../src/dev-server/index.js';
import { type ConversationResult, runConversation } from './support/conversation.js';
import { startEchoServer } from './support/dev-server-fixture.js';
import { armFault, describeFault, type Fault, prng, randomFaults } from './support/fault-catalog.js';

/**
 * The same two-turn conversation, fault-free and under faults: the final messages and the
 * chunk sequence per turn must match (nothing lost, nothing repeated; adjacent deltas are
 * compared joined, since the transport merges those that arrive together), with no error
 * surfacing to the chat and no hang; no `.out` connection is open 1 s after its turn's
 * stream closed; and each reply streamed over time (its first chunk was not held until
 * the turn-complete, but for a follow-up turn whose append is answered only after it).
 */
const LANES = 4;
const BARE_LANES = 2;
const RANDOM_SCHEDULES = 240;
const BATCH = 24;
const baseSeed = Number(process.env.FAULT_SEED ?? Math.floor(Math.random() * 2 ** 31));

const servers: DevServer[] = [];
/** Servers that send neither the append's `seq` nor `session-in-event-id` (optional on the wire). */
const bareServers: DevServer[] = [];
let baseline: ConversationResult;
let chatCounter = 0;

beforeAll(async () => {
  for (let lane = 0; lane < LANES; lane++) servers.push(await startEchoServer());
  for (let lane = 0; lane < BARE_LANES; lane++) {
    bareServers.push(await startEchoServer({ wire: { appendSeq: false, sessionInEventId: false } }));
  }
  baseline = await runConversation(servers[0] as DevServer, 'baseline', { transport: PACED });
  expect(baseline.errors).toEqual([]);
  expect(baseline.transcript).toEqual([
    'user: first message to echo back',
    'assistant: Echo: first message to echo back first message to echo back',
    'user: second, shorter one',
    'assistant: Echo: second, shorter one',
  ]);
});

afterAll(async () => {
  await Promise.all([...servers, ...bareServers].map((server) => server.close()));
});

/** The agent paces its deltas, so "streamed over time" is observable. */
const PACED = { clientData: { delayMs: 25 } };

/** Records in the first turn's `.out` reading (chunks + turn-complete). */
const TURN_RECORDS = 16;

/** Runs with one chunk per record (`coalesceDeltas: false`): chunks compare exactly. */
const UNMERGED = { clientData: { delayMs: 25 }, coalesceDeltas: false };
let unmergedBaseline: ConversationResult | undefined;

async function runUnder(
  server: DevServer,
  faultsPerTurn: Fault[][],
  label: string,
  unmerged = false,
): Promise<void> {
  const chatId = `matrix-${++chatCounter}`;
  const result = await runConversation(server, chatId, {
    label,
    transport: unmerged ? UNMERGED : PACED,
    beforeTurn: (turn, transport) => {
      server.faults.reset();
      for (const fault of faultsPerTurn[turn] ?? []) armFault(server, transport, chatId, fault);
    },
  });
  server.faults.reset();
  const context = `${label}\nfaults: ${faultsPerTurn.map((turn) => turn.map(describeFault).join(' + ') || 'none').join(' | ')}`;
  expect(result.errors, context).toEqual([]);
  expect(result.status, context).toBe('ready');
  expect(result.transcript, context).toEqual(baseline.transcript);
  expect(result.chunks, context).toEqual(baseline.chunks);
  if (unmerged) {
    unmergedBaseline ??= await runConversation(server, `matrix-${++chatCounter}`, { transport: UNMERGED });
    expect(result.rawChunks, context).toEqual(unmergedBaseline.rawChunks);
  }
  // No `.out` connection outlives its turn's stream by more than a second.
  expect(result.lingering, context).toBe(0);
  // Each reply streamed: its first chunk reached the chat well before its turn-complete.
  // Except a follow-up turn whose append the server answers only after the whole turn: its
  // records arrive before the append's `seq`, which alone tells them from another device's
  // turn between this page's two turns, so they wait for it (retries do not: see
  // `TurnStream.appendRetrying`).
  result.spreadMs.forEach((spread, turn) => {
    const heldAnswer = turn > 0 && (faultsPerTurn[turn] ?? []).some((fault) => fault.kind === 'hold-append');
    if (!heldAnswer) expect(spread, context).toBeGreaterThan(0);
  });
}

/** Runs `cases` on every lane at once (each lane owns a server, so faults never cross). */
async function inLanes(
  cases: { faults: Fault[][]; label: string; unmerged?: boolean }[],
  pool: DevServer[] = servers,
): Promise<void> {
  const queues = pool.map(() => [] as typeof cases);
  cases.forEach((entry, index) => {
    queues[index % pool.length]?.push(entry);
  });
  await Promise.all(
    queues.map(async (queue, lane) => {
      for (const entry of queue)
        await runUnder(pool[lane] as DevServer, entry.faults, entry.label, entry.unmerged);
    }),
  );
}

const boundaries = Array.from({ length: TURN_RECORDS + 2 }, (_, index) => index);

describe('fault matrix', () => {
  it('drops at every record boundary of a turn, and mid-frame', async () => {
    await inLanes(
      boundaries.flatMap((afterRecords) =>
        [false, true].map((midFrame) => ({
          label: `drop after ${afterRecords}${midFrame ? ' mid-frame' : ''}`,
          faults: [
            [{ kind: 'drop', afterRecords, midFrame } as Fault],
            [{ kind: 'drop', afterRecords, midFrame } as Fault],
          ],
        })),
      ),
    );
  });

  it('one chunk per record (coalesceDeltas: false): drops at every boundary, chunk for chunk', async () => {
    await inLanes(
      boundaries.map((afterRecords) => ({
        label: `unmerged, drop after ${afterRecords}`,
        faults: [[{ kind: 'drop', afterRecords, midFrame: false } as Fault], []],
        unmerged: true,
      })),
    );
  });

  it('`error` events at every record boundary', async () => {
    await inLanes(
      boundaries.map((afterRecords) => ({
        label: `error event after ${afterRecords}`,
        faults: [[{ kind: 'error-event', afterRecords }], [{ kind: 'error-event', afterRecords }]],
      })),
    );
  });

  it('duplicated records on replay, repeated drops, tiny writes', async () => {
    await inLanes([
      ...[1, 3, 10].map((records) => ({
        label: `duplicates ${records}`,
        faults: [[{ kind: 'duplicates', records, dropAfter: 5 } as Fault], []],
      })),
      {
        label: 'three drops in a row',
        faults: [
          [
            { kind: 'drop', afterRecords: 2, midFrame: false },
            { kind: 'drop', afterRecords: 1, midFrame: true },
            { kind: 'drop', afterRecords: 0, midFrame: false },
          ] as Fault[],
          [],
        ],
      },
      ...[1, 7, 33].map((bytes) => ({
        label: `tiny writes of ${bytes} bytes`,
        faults: [[{ kind: 'tiny-writes', bytes } as Fault], [{ kind: 'tiny-writes', bytes } as Fault]],
      })),
    ]);
  });

  it('appends answered after the whole turn, stored then failed, 429 resets in seconds', async () => {
    await inLanes([
      {
        label: 'append held until the turn is written',
        faults: [[{ kind: 'hold-append' }], [{ kind: 'hold-append' }]],
      },
      {
        label: '500 after storing',
        faults: [[{ kind: 'append-500-after-store' }], [{ kind: 'append-500-after-store' }]],
      },
      { label: '429 with a reset in seconds', faults: [[{ kind: 'append-429-seconds', count: 1 }], []] },
    ]);
  });

  it('500 and 429 bursts on append, and a lost append response', async () => {
    await inLanes([
      { label: 'one 500', faults: [[{ kind: 'append-500', count: 1 }], []] },
      { label: 'three 500s', faults: [[], [{ kind: 'append-500', count: 3 }]] },
      { label: 'two 429s', faults: [[{ kind: 'append-429', count: 2, resetInMs: 30 }], []] },
      {
        label: 'lost append response',
        faults: [[{ kind: 'lost-append-response' }], [{ kind: 'lost-append-response' }]],
      },
      {
        label: 'lost response then 500',
        faults: [[{ kind: 'lost-append-response' }, { kind: 'append-500', count: 1 }], []],
      },
    ]);
  });

  it('token expiry and revocation mid-stream', async () => {
    await inLanes([
      {
        label: 'tokens expire',
        faults: [[{ kind: 'expire-tokens', dropAfter: 4 }], [{ kind: 'expire-tokens', dropAfter: 0 }]],
      },
      { label: 'token revoked', faults: [[], [{ kind: 'revoke-token', dropAfter: 3 }]] },
    ]);
  });

  it('upgrade-required mid-turn: the swapped-in run re-streams, nothing is repeated', async () => {
    await inLanes(
      [1, 3, 6, 9].map((afterChunks) => ({
        label: `upgrade after ${afterChunks} chunks`,
        faults: [[{ kind: 'upgrade', afterChunks } as Fault], []],
      })),
    );
  });

  it('without seq / session-in-event-id: drops at every boundary, append faults, upgrades', async () => {
    await inLanes(
      [
        ...boundaries.map((afterRecords) => ({
          label: `bare wire: drop after ${afterRecords}`,
          faults: [
            [{ kind: 'drop', afterRecords, midFrame: afterRecords % 2 === 1 } as Fault],
            [{ kind: 'drop', afterRecords, midFrame: false } as Fault],
          ],
        })),
        { label: 'bare wire: lost append response', faults: [[{ kind: 'lost-append-response' }], []] },
        { label: 'bare wire: append held', faults: [[{ kind: 'hold-append' }], [{ kind: 'hold-append' }]] },
        { label: 'bare wire: 500 after storing', faults: [[], [{ kind: 'append-500-after-store' }]] },
        { label: 'bare wire: three 500s', faults: [[{ kind: 'append-500', count: 3 }], []] },
        { label: 'bare wire: upgrade', faults: [[{ kind: 'upgrade', afterChunks: 3 }], []] },
        { label: 'bare wire: error event', faults: [[{ kind: 'error-event', afterRecords: 4 }], []] },
      ],
      bareServers,
    );
  });

  for (let start = 0; start < RANDOM_SCHEDULES; start += BATCH) {
    it(`random fault schedules ${start}-${start + BATCH - 1} (base seed ${baseSeed})`, async () => {
      const cases = Array.from({ length: BATCH }, (_, offset) => {
        const seed = baseSeed + start + offset;
        const random = prng(seed);
        return {
          label: `seed ${seed} (rerun with FAULT_SEED=${seed - start - offset})`,
          faults: [randomFaults(random, TURN_RECORDS), randomFaults(random, 10)],
        };
      });
      await inLanes(cases);
    });
  }
});
