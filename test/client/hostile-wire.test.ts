import type { ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../src/client/events.js';
import type { ReadOutItem } from '../../src/client/read-out-iterable.js';
import { SessionClient } from '../../src/client/session-client.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { userMessageChunk } from '../../src/protocol/input-chunks.js';
import { MAX_SSE_EVENT_CHARS } from '../../src/protocol/limits.js';
import {
  startEchoServer,
  startSessionVia,
  uniqueChatId,
  userMessage,
} from '../transport/support/dev-server-fixture.js';
import { type HostileProxy, startHostileProxy } from './support/hostile-proxy.js';

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

function makeClient() {
  const events: SessionEvent[] = [];
  const chatId = uniqueChatId('hostile');
  const client = new SessionClient({
    baseURL: proxy.url,
    chatId,
    taskIdentifier: 'echo',
    startSession: startSessionVia(server),
    onEvent: (event) => events.push(event),
    retry: { initialDelayMs: 10, maxDelayMs: 50 },
    environment: { warn: () => {} },
  });
  return { client, events, chatId };
}

async function readTurn(client: SessionClient): Promise<ReadOutItem[]> {
  const items: ReadOutItem[] = [];
  for await (const item of client.readOut({ from: undefined })) {
    items.push(item);
    if (item.kind === 'control' && item.control === 'turn-complete') break;
  }
  return items;
}

const replyOf = (items: ReadOutItem[]) =>
  items
    .flatMap((item) => (item.kind === 'data' && item.chunk.type === 'text-delta' ? [item.chunk.delta] : []))
    .join('');

const errorCodes = (events: SessionEvent[]) =>
  events.flatMap((event) => (event.type === 'error' ? [event.error.code] : []));

/** An `.out` answer whose one event never ends: a big unterminated line, then a trickle forever. */
function endlessEvent(response: ServerResponse): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'x-stream-version': 'v2' });
  response.write('event: batch\ndata: ');
  const piece = 'x'.repeat(1024 * 1024);
  for (let written = 0; written <= MAX_SSE_EVENT_CHARS; written += piece.length) response.write(piece);
  const trickle = setInterval(() => response.write('x'.repeat(1024)), 20);
  response.on('close', () => clearInterval(trickle));
}

/** Adds a record with an absurd `seq_num` to the first batch that carries records (its tail kept). */
function absurdSeqOnce(): (frame: string) => string {
  let done = false;
  return (frame) => {
    const match = /^data: (.*)$/m.exec(frame);
    if (done || !frame.startsWith('event: batch') || match?.[1] === undefined) return frame;
    const data = JSON.parse(match[1]) as { records: { seq_num: number }[]; tail?: unknown };
    const last = data.records.at(-1);
    if (last === undefined) return frame;
    done = true;
    data.records.push({ ...last, seq_num: Number.MAX_SAFE_INTEGER });
    return frame.replace(match[0], `data: ${JSON.stringify(data)}`);
  };
}

describe('a hostile or broken wire', () => {
  it('an SSE event over the buffer limit is a typed EVENT_TOO_LARGE error; the read reconnects and finishes the turn', async () => {
    const { client, chatId, events } = makeClient();
    await client.preload();
    proxy.outScripts = [{ kind: 'answer', write: endlessEvent }];
    await client.append(userMessageChunk({ chatId, message: userMessage('still here?') }));
    const items = await readTurn(client);
    expect(errorCodes(events)).toContain('EVENT_TOO_LARGE');
    expect(proxy.outConnections).toBeGreaterThanOrEqual(2);
    expect(replyOf(items)).toContain('still here?');
    client.close();
  }, 15_000);

  it("a seq_num past the batch's own tail is a typed MALFORMED_BATCH error that does not move the cursor", async () => {
    const { client, chatId, events } = makeClient();
    await client.preload();
    proxy.outScripts = [{ kind: 'rewrite', frame: absurdSeqOnce() }];
    await client.append(userMessageChunk({ chatId, message: userMessage('count on me') }));
    const items = await readTurn(client);
    expect(errorCodes(events)).toContain('MALFORMED_BATCH');
    expect(replyOf(items)).toContain('count on me');
    expect(items.some((item) => item.kind !== 'trimmed' && item.seqNum === Number.MAX_SAFE_INTEGER)).toBe(
      false,
    );
    expect(client.getState().lastEventId).toBeLessThan(1000);
    client.close();
  });
});
