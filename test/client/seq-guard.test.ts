import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../src/client/events.js';
import type { ReadOutItem } from '../../src/client/read-out-iterable.js';
import { SessionClient } from '../../src/client/session-client.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { userMessageChunk } from '../../src/protocol/input-chunks.js';
import {
  startEchoServer,
  startSessionVia,
  uniqueChatId,
  userMessage,
  waitFor,
} from '../transport/support/dev-server-fixture.js';
import { type HostileProxy, startHostileProxy } from './support/hostile-proxy.js';

/**
 * Issue 20 item 4, batches without a `tail`: a cursor jump (an absurd `seq_num`) that later
 * records or a later tail contradict is a typed protocol error, never a silent loss.
 */
let server: DevServer;
let proxy: HostileProxy;
beforeAll(async () => {
  server = await startEchoServer({ pingIntervalMs: 200 });
  proxy = await startHostileProxy(server.url);
});
afterAll(async () => {
  await proxy.close();
  await server.close();
});
afterEach(() => {
  proxy.outScripts = [];
});

const ABSURD = Number.MAX_SAFE_INTEGER;

interface WireRecord {
  seq_num: number;
}

/**
 * Rewrites the first batch frame that carries records (its `tail` removed) with `arrange`,
 * which returns the batches to send in its place; every other frame passes untouched.
 */
function firstBatch(arrange: (records: WireRecord[]) => WireRecord[][]): (frame: string) => string {
  let done = false;
  return (frame) => {
    const match = /^data: (.*)$/m.exec(frame);
    if (done || !frame.startsWith('event: batch') || match?.[1] === undefined) return frame;
    const data = JSON.parse(match[1]) as { records: WireRecord[] };
    if (data.records.length === 0) return frame;
    done = true;
    return arrange(data.records)
      .map((records) => `event: batch\ndata: ${JSON.stringify({ records })}\n\n`)
      .join('');
  };
}

/** Every batch frame of the connection without its `tail`, the first one with `arrange`d records. */
function tailless(arrange: (records: WireRecord[]) => WireRecord[][]): (frame: string) => string {
  const first = firstBatch(arrange);
  return (frame) => {
    const rewritten = first(frame);
    if (rewritten !== frame || !frame.startsWith('event: batch')) return rewritten;
    const match = /^data: (.*)$/m.exec(frame);
    if (match?.[1] === undefined) return frame;
    const { records } = JSON.parse(match[1]) as { records: WireRecord[] };
    return `event: batch\ndata: ${JSON.stringify({ records })}\n\n`;
  };
}

const absurd = (record: WireRecord | undefined): WireRecord => ({
  ...(record as WireRecord),
  seq_num: ABSURD,
});

async function finishedChat(text: string) {
  const events: SessionEvent[] = [];
  const chatId = uniqueChatId('seq-guard');
  const client = new SessionClient({
    baseURL: proxy.url,
    chatId,
    taskIdentifier: 'echo',
    startSession: startSessionVia(server),
    onEvent: (event) => events.push(event),
    retry: { initialDelayMs: 10, maxDelayMs: 50 },
    environment: { warn: () => {} },
  });
  await client.append(userMessageChunk({ chatId, message: userMessage(text) }));
  // The whole turn is on `.out` before the read under test: its first batch carries all of it.
  const probe = new SessionClient({
    baseURL: server.url,
    chatId,
    taskIdentifier: 'echo',
    startSession: startSessionVia(server),
    environment: { warn: () => {} },
  });
  for await (const item of probe.readOut({ from: undefined })) {
    if (item.kind === 'control' && item.control === 'turn-complete') break;
  }
  probe.close();
  return { client, events };
}

/** Reads from the start until the turn-complete (`stopAtTurnEnd`), an error, or 8 s. */
async function read(client: SessionClient, stopAtTurnEnd: boolean) {
  const items: ReadOutItem[] = [];
  const signal = AbortSignal.timeout(8_000);
  try {
    for await (const item of client.readOut({ from: undefined, signal })) {
      items.push(item);
      if (stopAtTurnEnd && item.kind === 'control' && item.control === 'turn-complete') break;
    }
    return { items, error: undefined, timedOut: signal.aborted };
  } catch (error) {
    return { items, error, timedOut: signal.aborted };
  }
}

const replyOf = (items: ReadOutItem[]) =>
  items
    .flatMap((item) => (item.kind === 'data' && item.chunk.type === 'text-delta' ? [item.chunk.delta] : []))
    .join('');
const errorCodes = (events: SessionEvent[]) =>
  events.flatMap((event) => (event.type === 'error' ? [event.error.code] : []));

describe('a cursor jump in batches without a tail', () => {
  it('a batch whose later records fall inside its own jump is refused whole (MALFORMED_BATCH); the read reconnects and finishes the turn', async () => {
    const { client, events } = await finishedChat('one batch');
    proxy.outScripts = [
      {
        kind: 'rewrite',
        frame: tailless(([first, ...rest]) => [[first as WireRecord, absurd(first), ...rest]]),
      },
    ];
    const result = await read(client, true);
    expect(result.timedOut).toBe(false);
    expect(result.error).toBeUndefined();
    expect(errorCodes(events)).toContain('MALFORMED_BATCH');
    expect(replyOf(result.items)).toContain('one batch');
    expect(result.items.some((item) => item.kind !== 'trimmed' && item.seqNum === ABSURD)).toBe(false);
    expect(client.getState().lastEventId).toBeLessThan(1000);
    client.close();
  });

  it('later batches that contradict an applied jump fail the read with MALFORMED_BATCH and move the cursor back before the jump', async () => {
    const { client, events } = await finishedChat('two batches');
    proxy.outScripts = [
      {
        kind: 'rewrite',
        frame: tailless(([first, ...rest]) => [[first as WireRecord, absurd(first)], rest]),
      },
    ];
    const result = await read(client, true);
    expect(result.timedOut).toBe(false);
    expect(result.error).toMatchObject({ name: 'ProtocolError', code: 'MALFORMED_BATCH', seqNum: 1 });
    expect(errorCodes(events)).toContain('MALFORMED_BATCH');
    // The stored cursor is the record before the jump: a later read (or a reload) starts there.
    expect(client.getState().lastEventId).toBe(0);
    const again = await read(client, true);
    expect(replyOf(again.items)).toContain('two batches');
    client.close();
  });

  it("a later ping's tail below the jump fails the read the same way (the jump was the batch's last record)", async () => {
    const { client } = await finishedChat('then a ping');
    let last = -1;
    proxy.outScripts = [
      {
        kind: 'rewrite',
        frame: tailless((records) => {
          last = records.at(-1)?.seq_num ?? -1;
          return [[...records, absurd(records.at(-1))]];
        }),
      },
    ];
    const result = await read(client, false);
    expect(result.timedOut).toBe(false);
    expect(result.error).toMatchObject({ code: 'MALFORMED_BATCH', seqNum: ABSURD });
    await waitFor(() => client.getState().lastEventId === last, 2_000, 'the cursor back before the jump');
    client.close();
  });
});
