import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userMessage } from '../../bench/clients/client-variant.js';
import { floorResumingTurn } from '../../bench/clients/floor-client.js';

// A server whose append fails with 503 and whose `.out` answers and then says nothing: a
// read left open would wait forever, so the floor must end it when the append fails.
let server: Server;
let baseUrl: string;
let reads = 0;
/** Set: the append answers only once a read is open, so the read is surely in flight when it fails. */
let readOpened: Promise<void> | undefined;
const onRead = () => {};

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url?.endsWith('/in/append')) {
      req.resume();
      void (readOpened ?? Promise.resolve()).then(() => {
        res.writeHead(503, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok: false, error: 'unavailable' }));
      });
      return;
    }
    reads++;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.flushHeaders();
    onRead();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('the bench floor', () => {
  const context = () => ({ baseUrl, chatId: 'floor-fails', token: 'token', message: userMessage('hi') });

  it('ends an overlapped read with the append error when the append fails', async () => {
    reads = 0;
    await expect(
      floorResumingTurn(context(), () => undefined, { overlapAppend: true }),
    ).rejects.toMatchObject({
      status: 503,
    });
    expect(reads).toBe(1);
  }, 10_000);

  it('does not read when the append fails and the read is not overlapped', async () => {
    reads = 0;
    readOpened = undefined;
    await expect(floorResumingTurn(context(), () => undefined)).rejects.toMatchObject({ status: 503 });
    expect(reads).toBe(0);
  }, 10_000);
});
