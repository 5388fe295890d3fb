import type { UIMessageChunk } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevServer } from '../../src/dev-server/index.js';
import { createTransport, readAll, startEchoServer, userMessage } from './support/dev-server-fixture.js';

let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer({ pingIntervalMs: 50 });
});
afterAll(async () => {
  await server.close();
});

describe('a slow consumer', () => {
  it('pauses the .out read (bounded queue) without it counting as a stall; nothing is lost', async () => {
    const { transport, events } = createTransport(server, {
      clientData: { repeat: 400 },
      retry: { stallTimeoutMs: 120 },
    });
    server.faults.writeSseInPieces(256); // many small network reads
    const stream = await transport.sendMessages({
      trigger: 'submit-message',
      chatId: 'slow-reader',
      messageId: undefined,
      messages: [userMessage('abcdefgh')],
      abortSignal: undefined,
    });
    // Let the turn finish on the server while nobody reads.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(transport.getState('slow-reader').turnLive).toBe(true);
    const chunks = (await readAll(stream)) as UIMessageChunk[];
    const text = chunks.flatMap((chunk) => (chunk.type === 'text-delta' ? [chunk.delta] : [])).join('');
    expect(text).toBe(`Echo: ${Array.from({ length: 400 }, () => 'abcdefgh').join(' ')}`);
    expect(events.filter((event) => event.type === 'stream-reconnecting')).toEqual([]);
    expect(transport.getState('slow-reader').turnLive).toBe(false);
    server.faults.reset();
    transport.close();
  });
});
