import { afterEach, describe, expect, it } from 'vitest';
import { type ReplayServer, replayRecording } from '../../src/dev-server/index.js';
import {
  RECORDING_FORMAT,
  RECORDING_VERSION,
  type RecordedExchange,
  type SessionRecording,
} from '../../src/protocol/recording.js';

/**
 * `replayRecording` answers each request with the recorded answer to the same request (a
 * read by its cursor, an append by its part id), not the next one in line, and keeps what the
 * recorded server sent after a request from reaching the client before that request is made.
 */
const OUT = '/realtime/v1/sessions/session_1/out';
const APPEND = '/realtime/v1/sessions/session_1/in/append';

function read(at: number, cursor: string | undefined, status: number, body: string[]): RecordedExchange {
  return {
    kind: 'out',
    at,
    request: {
      method: 'GET',
      path: OUT,
      headers: cursor === undefined ? {} : { 'last-event-id': cursor },
    },
    response: {
      at: at + 1,
      status,
      headers: { 'content-type': status === 200 ? 'text/event-stream' : 'application/json' },
      frames: body.map((text, index) => ({ at: at + 2 + index, text })),
      end: { type: 'complete', at: at + 2 + body.length },
    },
  };
}

function append(at: number, partId: string, status: number, body: string): RecordedExchange {
  return {
    kind: 'append',
    at,
    request: { method: 'POST', path: APPEND, headers: { 'x-part-id': partId }, body: '{}' },
    response: {
      at: at + 1,
      status,
      headers: { 'content-type': 'application/json' },
      frames: [{ at: at + 2, text: body }],
      end: { type: 'complete', at: at + 3 },
    },
  };
}

function recording(exchanges: RecordedExchange[]): SessionRecording {
  return {
    format: RECORDING_FORMAT,
    version: RECORDING_VERSION,
    chatId: 'chat-1',
    startedAt: 0,
    truncated: false,
    tokens: [],
    starts: [],
    exchanges,
    events: [],
    notes: [],
  };
}

const warnings: string[] = [];
const logger = { warn: (message: string) => warnings.push(message) };
let replay: ReplayServer | undefined;

async function serve(exchanges: RecordedExchange[], requestWaitMs?: number): Promise<ReplayServer> {
  warnings.length = 0;
  replay = await replayRecording(recording(exchanges), {
    logger,
    speed: Number.POSITIVE_INFINITY,
    ...(requestWaitMs === undefined ? {} : { requestWaitMs }),
  });
  return replay;
}

afterEach(async () => {
  await replay?.close();
  replay = undefined;
});

async function get(server: ReplayServer, cursor?: string, signal?: AbortSignal) {
  const response = await fetch(`${server.url}${OUT}`, {
    headers: cursor === undefined ? {} : { 'last-event-id': cursor },
    signal,
  });
  return `${response.status} ${await response.text()}`;
}

async function post(server: ReplayServer, partId: string) {
  const response = await fetch(`${server.url}${APPEND}`, {
    method: 'POST',
    headers: { 'x-part-id': partId, 'content-type': 'application/json' },
    body: '{}',
  });
  return `${response.status} ${await response.text()}`;
}

describe('replayRecording matches requests by what they are', () => {
  it('serves two `.out` reads that arrive in the opposite order by their cursors', async () => {
    const server = await serve([
      read(0, undefined, 200, ['id: 1\ndata: first\n\n']),
      read(10, '1', 200, ['id: 2\ndata: second\n\n']),
    ]);
    const later = get(server, '1');
    await expect.poll(() => server.served.out).toBe(1);
    const earlier = get(server);
    expect(await later).toBe('200 id: 2\ndata: second\n\n');
    expect(await earlier).toBe('200 id: 1\ndata: first\n\n');
    expect(server.served.out).toBe(2);
    expect(server.unmatched).toEqual([]);
  });

  it('serves a read repeated from one cursor in recorded order, and one more as beyond the recording', async () => {
    const server = await serve([
      read(0, '2', 401, ['{"error":"expired"}']),
      read(10, '2', 200, ['id: 3\ndata: after the refresh\n\n']),
      read(20, '3', 200, ['id: 4\ndata: next\n\n']),
    ]);
    expect(await get(server, '2')).toBe('401 {"error":"expired"}');
    expect(await get(server, '2')).toBe('200 id: 3\ndata: after the refresh\n\n');
    // A reconnect the recorded client never made: it must not take the read from cursor 3.
    const extra = new AbortController();
    const beyond = get(server, '2', extra.signal).catch(() => 'left');
    expect(await get(server, '3')).toBe('200 id: 4\ndata: next\n\n');
    await expect.poll(() => server.unmatched).toEqual([{ method: 'GET', path: OUT, kind: 'out' }]);
    extra.abort();
    expect(await beyond).toBe('left');
    expect(server.served.out).toBe(3);
    expect(warnings.join('\n')).toContain('no read from this cursor (Last-Event-ID 2)');
  });

  it('serves an append by its part id: a retry gets its own recorded attempt, a new append the next one', async () => {
    const server = await serve([
      append(0, 'recorded-a', 401, '{"error":"expired"}'),
      append(10, 'recorded-a', 200, '{"seq":0}'),
      append(20, 'recorded-b', 200, '{"seq":1}'),
    ]);
    expect(await post(server, 'run-a')).toBe('401 {"error":"expired"}');
    // The second message goes out before the first one's retry.
    const second = post(server, 'run-b');
    await expect.poll(() => server.served.append).toBe(2);
    const retry = post(server, 'run-a');
    expect(await second).toBe('200 {"seq":1}');
    expect(await retry).toBe('200 {"seq":0}');
    // One retry more than the recorded client made is beyond the recording.
    expect(await post(server, 'run-a')).toMatch(/^500 /);
    expect(server.unmatched).toEqual([{ method: 'POST', path: APPEND, kind: 'append' }]);
    expect(server.served.append).toBe(3);
  });
});

describe('replayRecording keeps answers behind the requests they came after', () => {
  const exchanges = () => [
    {
      ...read(0, undefined, 200, []),
      response: {
        at: 1,
        status: 200,
        headers: { 'content-type': 'text/event-stream' },
        frames: [
          { at: 2, text: 'id: 1\ndata: before\n\n' },
          { at: 30, text: 'id: 2\ndata: the reply\n\n' },
        ],
        end: { type: 'complete' as const, at: 31 },
      },
    },
    append(20, 'recorded-a', 200, '{"seq":0}'),
  ];

  async function firstPieces(server: ReplayServer) {
    const response = await fetch(`${server.url}${OUT}`);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    // A read that timed out is still the one that gets the next piece.
    let pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;
    const next = async (withinMs: number) => {
      pending ??= reader.read();
      const timeout = new Promise<'nothing'>((resolve) => setTimeout(() => resolve('nothing'), withinMs));
      const piece = await Promise.race([pending, timeout]);
      if (piece === 'nothing') return piece;
      pending = undefined;
      return decoder.decode(piece.value);
    };
    return { next, cancel: () => reader.cancel() };
  }

  it('a reply recorded after an append waits for the append, even at full speed', async () => {
    const server = await serve(exchanges(), 60_000);
    const stream = await firstPieces(server);
    expect(await stream.next(1_000)).toBe('id: 1\ndata: before\n\n');
    expect(await stream.next(300)).toBe('nothing');
    const reply = stream.next(5_000);
    expect(await post(server, 'run-a')).toBe('200 {"seq":0}');
    expect(await reply).toBe('id: 2\ndata: the reply\n\n');
    await stream.cancel();
    expect(server.unmatched).toEqual([]);
    expect(warnings).toEqual([]);
  });

  it('plays on without a recorded request that does not come within `requestWaitMs`, and says so', async () => {
    const server = await serve(exchanges(), 100);
    const stream = await firstPieces(server);
    expect(await stream.next(1_000)).toBe('id: 1\ndata: before\n\n');
    expect(await stream.next(5_000)).toBe('id: 2\ndata: the reply\n\n');
    await stream.cancel();
    expect(warnings.join('\n')).toContain(`the recorded POST ${APPEND} (at 20 ms) has not come`);
  });

  it('a client that starts after the recorded first requests waits once for them all', async () => {
    const server = await serve(
      [
        read(0, undefined, 200, ['id: 1\ndata: first\n\n']),
        append(5, 'recorded-a', 200, '{"seq":0}'),
        read(10, '1', 200, ['id: 2\ndata: second\n\n']),
      ],
      200,
    );
    const started = Date.now();
    expect(await get(server, '1')).toBe('200 id: 2\ndata: second\n\n');
    expect(warnings).toHaveLength(2);
    expect(warnings.join('\n')).toContain(`the recorded GET ${OUT} (at 0 ms) has not come`);
    expect(warnings.join('\n')).toContain(`the recorded POST ${APPEND} (at 5 ms) has not come`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  });
});
