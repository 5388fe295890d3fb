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
  let gate: Promise<void> = Promise.resolve();
  const controls = {
    backlogWritten: Promise.resolve(),
    open: () => open(),
    /** A fresh gate for the next turn. */
    reset() {
      gate = new Promise<void>((resolve) => {
        open = resolve;
      });
      controls.backlogWritten = new Promise<void>((resolve) => {
        written = resolve;
      });
    },
  };
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
  return Object.assign(controls, { agent });
}

const gated = gatedAgent();
let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer({ agents: [gated.agent] });
});
afterAll(async () => {
  await server.close();
});

async function readBacklog(options: { coalesceDeltas?: boolean } = {}): Promise<UIMessageChunk[]> {
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
  const second = createTransport(server, { taskIdentifier: 'backlog', ...options });
  await second.transport.getClient(chatId).preload();
  const stream = await second.transport.reconnectToStream({ chatId });
  if (stream === null) throw new Error('expected the live turn to be resumed');
  const reader = stream.getReader();
  const head = await reader.read();
  // Only now may the turn end: the backlog was held and released before its turn-complete.
  gated.open();
  reader.releaseLock();
  const chunks = [head.value, ...(await readAll(stream))] as UIMessageChunk[];
  expect(second.transport.getState(chatId).turnLive).toBe(false);
  second.transport.close();
  expect(chunks.map((chunk) => chunk.type).filter((type) => type !== 'text-delta')).toEqual([
    'start',
    'text-start',
    'text-end',
    'finish',
  ]);
  return chunks;
}

const expectedText = `${Array.from({ length: BACKLOG }, (_, index) => `d${index} `).join('')}after the gate`;

function deltasOf(chunks: UIMessageChunk[]): string[] {
  return chunks.flatMap((chunk) => (chunk.type === 'text-delta' ? [chunk.delta] : []));
}

describe('a long backlog', () => {
  it('is delivered completely and in order to a reader that connects after it was written, merged into few chunks', async () => {
    gated.reset();
    const deltas = deltasOf(await readBacklog());
    expect(deltas.join('')).toBe(expectedText);
    // The backlog was all there at once: its deltas reach the reducer as a few long ones.
    expect(deltas.length).toBeLessThan(BACKLOG / 100);
  });

  it('with coalesceDeltas: false, arrives as one chunk per record', async () => {
    gated.reset();
    const deltas = deltasOf(await readBacklog({ coalesceDeltas: false }));
    expect(deltas).toHaveLength(BACKLOG + 1);
    const outOfPlace = deltas.findIndex((delta, index) =>
      index < BACKLOG ? delta !== `d${index} ` : delta !== 'after the gate',
    );
    expect(outOfPlace).toBe(-1);
  });
});
