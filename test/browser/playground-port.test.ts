import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningPlayground, startPlayground } from '../../playground/src/host/start-playground.js';

// The host alone, in-process, over real loopback HTTP: no browser needed. A port held by
// another server stands in for a second playground or a Vite dev server on 5173.

let holder: Server | undefined;
let playground: RunningPlayground | undefined;
afterEach(async () => {
  await playground?.close();
  playground = undefined;
  await new Promise((resolve) => (holder === undefined ? resolve(undefined) : holder.close(resolve)));
  holder = undefined;
});

async function holdAPort(): Promise<number> {
  const server = createServer();
  holder = server;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

describe('the playground port', () => {
  it('moves past a taken default port to the next free one, says so, and serves there', async () => {
    const taken = await holdAPort();
    const skipped: number[] = [];
    playground = await startPlayground({
      port: taken,
      strictPort: false,
      host: '127.0.0.1',
      backend: { kind: 'local' },
      onPortTaken: (port) => skipped.push(port),
    });
    const port = Number(new URL(playground.url).port);
    expect(port).toBeGreaterThan(taken);
    expect(skipped[0]).toBe(taken);
    expect(skipped).toEqual(Array.from({ length: port - taken }, (_, index) => taken + index));
    const config = await fetch(`${playground.url}/playground/config`);
    expect(config.status).toBe(200);
    expect(await config.json()).toMatchObject({ mode: 'local', baseURL: playground.url });
  });

  it('fails on a taken PORT the user chose, naming the fix', async () => {
    const taken = await holdAPort();
    await expect(
      startPlayground({ port: taken, strictPort: true, host: '127.0.0.1', backend: { kind: 'local' } }),
    ).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      field: 'PORT',
      message: `PORT=${taken} is in use on 127.0.0.1: stop what holds it, or set PORT to another port (0 picks any free one)`,
    });
  });
});
