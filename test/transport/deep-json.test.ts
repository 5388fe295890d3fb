import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevServer } from '../../src/dev-server/index.js';
import { type HostileProxy, startHostileProxy } from '../client/support/hostile-proxy.js';
import { createTransport, startEchoServer, TestChat, transcript } from './support/dev-server-fixture.js';

let server: DevServer;
let proxy: HostileProxy;
beforeAll(async () => {
  server = await startEchoServer();
  proxy = await startHostileProxy(server.url);
});
afterAll(async () => {
  await proxy.close();
  await server.close();
});

const DEPTH = 50_000;
const deepData = `${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`;

/** Swaps the first `finish-step` record's chunk for a data part nested DEPTH levels deep. */
function deepChunkOnce(): (frame: string) => string {
  let done = false;
  return (frame) => {
    if (done || !frame.includes('finish-step')) return frame;
    done = true;
    const deepBody = JSON.stringify(`{"data":{"type":"data-deep","data":${deepData}},"id":"deep"}`).slice(
      1,
      -1,
    );
    return frame.replace(/\{\\"data\\":\{\\"type\\":\\"finish-step\\"\},\\"id\\":\\"[^"\\]*\\"\}/, deepBody);
  };
}

describe('deeply nested JSON on the wire', () => {
  it('is a typed MALFORMED_RECORD, never a stack overflow reported as a network error; the turn completes', async () => {
    const { transport, events } = createTransport(server, { baseURL: proxy.url });
    proxy.outScripts = [{ kind: 'rewrite', frame: deepChunkOnce() }];
    const chat = new TestChat({ id: `deep-${Date.now()}`, transport });
    await chat.sendMessage({ text: 'nest with care' });
    const codes = events.flatMap((event) => (event.type === 'error' ? [event.error.code] : []));
    expect(codes).toContain('MALFORMED_RECORD');
    expect(codes).not.toContain('NETWORK_ERROR');
    expect(chat.error).toBeUndefined();
    expect(transcript(chat.messages)).toEqual(['user: nest with care', 'assistant: Echo: nest with care']);
    transport.close();
  });
});
