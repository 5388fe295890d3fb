import { mkdtemp, rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevServer } from '../../src/dev-server/index.js';
import { type CliProcess, startCli } from './support/cli-process.js';
import { openChat } from './support/client.js';

let dir: string;
let cli: CliProcess;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'durable-chat-limits-'));
  cli = await startCli(['dev', '--port', '0', '--data-dir', join(dir, 'data')]);
}, 30_000);
afterAll(async () => {
  await cli?.stop();
  await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

interface RawConnection {
  socket: Socket;
  /** Resolves with what the server sent, once it closed the connection. */
  closed: Promise<{ received: string; afterMs: number }>;
  /** Resolves with the status line of the first response. */
  status: Promise<string>;
}

function rawConnection(url: string): Promise<RawConnection> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const started = Date.now();
    let received = '';
    let onStatus: (line: string) => void = () => {};
    const status = new Promise<string>((resolveStatus) => {
      onStatus = resolveStatus;
    });
    socket.on('data', (data: Buffer) => {
      received += data.toString('latin1');
      if (received.includes('\r\n')) onStatus(received.slice(0, received.indexOf('\r\n')));
    });
    socket.on('error', () => {});
    const closed = new Promise<{ received: string; afterMs: number }>((resolveClosed) =>
      socket.on('close', () => resolveClosed({ received, afterMs: Date.now() - started })),
    );
    socket.once('connect', () => resolve({ socket, closed, status }));
    socket.once('error', reject);
  });
}

function post(path: string, body: string, authorization: string): Promise<Response> {
  return fetch(`${cli.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${authorization}`, 'content-type': 'application/json' },
    body,
  });
}

const twoMiB = (prefix: string) => `${prefix}${'x'.repeat(2 * 1024 * 1024)}`;

describe('request bodies are capped while reading (CLI)', () => {
  it('an append body that passes 1 MiB is answered 413 before it ends', async () => {
    const chat = await openChat(cli, `cap-${Date.now()}`, 'demo');
    const connection = await rawConnection(cli.url);
    connection.socket.write(
      `POST /realtime/v1/sessions/${chat.chatId}/in/append HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${chat.token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
    );
    const piece = 'x'.repeat(64 * 1024);
    // 1.125 MiB sent, and the body never ends (no terminating chunk).
    for (let index = 0; index < 18; index++)
      connection.socket.write(`${piece.length.toString(16)}\r\n${piece}\r\n`);
    expect(await connection.status).toMatch(/^HTTP\/1\.1 413/);
    connection.socket.destroy();
  });

  it.each([
    ['create', async () => '/api/v1/sessions'],
    [
      'close',
      async () => `/api/v1/sessions/${(await openChat(cli, `close-${Date.now()}`, 'demo')).id}/close`,
    ],
    ['faults', async () => '/__dev/faults'],
  ])('a %s body over 1 MiB is 413 PAYLOAD_TOO_LARGE', async (_what, pathFor) => {
    const path = await pathFor();
    const body = JSON.stringify({ metadata: twoMiB(''), reason: 'r', fault: 'reset' });
    const response = await post(path, body, cli.secretKey);
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
  });
});

describe('idle and half-sent requests time out (CLI, defaults)', () => {
  it('closes a connection that sends nothing, and answers 408 to headers that never end', async () => {
    const silent = await rawConnection(cli.url);
    const halfHeaders = await rawConnection(cli.url);
    halfHeaders.socket.write('GET /realtime/v1/sessions/x/out HTTP/1.1\r\nHost: x\r\n');
    const [silentEnd, halfEnd] = await Promise.all([silent.closed, halfHeaders.closed]);
    expect(silentEnd.received).toBe('');
    expect(silentEnd.afterMs).toBeLessThan(13_000);
    expect(halfEnd.received).toMatch(/^HTTP\/1\.1 408/);
    expect(halfEnd.afterMs).toBeLessThan(13_000);
  }, 20_000);
});

describe('half-sent bodies time out (in-process, short deadline)', () => {
  it('answers 408 to a body that stops arriving', async () => {
    const server = await startDevServer({ port: 0, requestTimeoutMs: 1000 });
    try {
      const connection = await rawConnection(server.url);
      connection.socket.write(
        `POST /api/v1/sessions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.secretKey}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"type":`,
      );
      const end = await connection.closed;
      expect(end.received).toMatch(/^HTTP\/1\.1 408/);
      expect(end.afterMs).toBeLessThan(4000);
    } finally {
      await server.close();
    }
  });
});

describe('long polls are bounded per session (CLI)', () => {
  it('the 17th open .out stream of one session is 429 TOO_MANY_STREAMS; closing one frees a slot', async () => {
    const chat = await openChat(cli, `polls-${Date.now()}`, 'demo');
    const open = (abort: AbortController) =>
      fetch(`${cli.url}/realtime/v1/sessions/${chat.chatId}/out`, {
        headers: {
          authorization: `Bearer ${chat.token}`,
          accept: 'text/event-stream',
          'timeout-seconds': '30',
        },
        signal: abort.signal,
      });
    const aborts = Array.from({ length: 16 }, () => new AbortController());
    const streams = await Promise.all(aborts.map(open));
    expect(streams.map((response) => response.status)).toEqual(Array(16).fill(200));
    const refused = await open(new AbortController());
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ code: 'TOO_MANY_STREAMS' });
    aborts[0]?.abort();
    // The slot frees once the server sees the socket close: retry briefly.
    let again: Response | undefined;
    const replacement = new AbortController();
    aborts.push(replacement);
    for (let attempt = 0; attempt < 50; attempt++) {
      again = await open(replacement);
      if (again.status === 200) break;
      await again.text();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(again?.status).toBe(200);
    for (const abort of aborts) abort.abort();
  });
});
