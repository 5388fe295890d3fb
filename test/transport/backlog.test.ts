import type { UIMessageChunk } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DevServer, defineAgent } from '../../src/dev-server/index.js';
import {
  createTransport,
  readAll,
  startEchoServer,
  uniqueChatId,
  userMessage,
} from './support/dev-server-fixture.js';

const BACKLOG = 20_000;

/**
 * Writes BACKLOG text deltas, then keeps the turn live until the test opens the gate: a
 * reader that connects in between finds a long turn already written (a reload mid-turn).
 */
function gatedAgent() {
  let open: () => void = () => {};
  let written: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  const backlogWritten = new Promise<void>((resolve) => {
    written = resolve;
  });
  const agent = defineAgent({
    id: 'backlog',
    async *run() {
      yield { type: 'start' } satisfies UIMessageChunk;
      yield { type: 'text-start', id: 't' } satisfies UIMessageChunk;
      for (let index = 0; index < BACKLOG; index++) {
        yield { type: 'text-delta', id: 't', delta: `d${index} ` } satisfies UIMessageChunk;
      }
      written();
      await gate;
      yield { type: 'text-delta', id: 't', delta: 'after the gate' } satisfies UIMessageChunk;
      yield { type: 'text-end', id: 't' } satisfies UIMessageChunk;
      yield { type: 'finish' } satisfies UIMessageChunk;
    },
  });
  return { agent, open: () => open(), backlogWritten };
}

const gated = gatedAgent();
let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer({ agents: [gated.agent] });
});
afterAll(async () => {
  await server.close();
});

describe('a long backlog', () => {
  it('is delivered completely and in order to a reader that connects after it was written', async () => {
    const chatId = uniqueChatId('backlog');
    const first = createTransport(server, { taskIdentifier: 'backlog' });
    await first.transport.sendMessages({
      trigger: 'submit-message',
      chatId,
      messageId: undefined,
      messages: [userMessage('write a long turn')],
      abortSignal: undefined,
    });
    first.transport.close(); // the page goes away before reading; the agent keeps writing
    await gated.backlogWritten;

    // A fresh page that knows only the session: it reads `.out` from its start and holds the
    // live turn's chunks until it reaches the live edge, then releases them all at once.
    const second = createTransport(server, { taskIdentifier: 'backlog' });
    await second.transport.getClient(chatId).preload();
    const stream = await second.transport.reconnectToStream({ chatId });
    if (stream === null) throw new Error('expected the live turn to be resumed');
    const reader = stream.getReader();
    const head = await reader.read();
    // Only now may the turn end: the backlog was held and released before its turn-complete.
    gated.open();
    reader.releaseLock();
    const chunks = [head.value, ...(await readAll(stream))] as UIMessageChunk[];

    const deltas = chunks.flatMap((chunk) => (chunk.type === 'text-delta' ? [chunk.delta] : []));
    expect(deltas).toHaveLength(BACKLOG + 1);
    const outOfPlace = deltas.findIndex((delta, index) =>
      index < BACKLOG ? delta !== `d${index} ` : delta !== 'after the gate',
    );
    expect(outOfPlace).toBe(-1);
    expect(chunks.map((chunk) => chunk.type).filter((type) => type !== 'text-delta')).toEqual([
      'start',
      'text-start',
      'text-end',
      'finish',
    ]);
    expect(second.transport.getState(chatId).turnLive).toBe(false);
    second.transport.close();
  });
});
