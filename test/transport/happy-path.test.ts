import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevServer } from '../../src/dev-server/index.js';
import { createTransport, startEchoServer, TestChat, transcript } from './support/dev-server-fixture.js';

let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer();
});
afterAll(async () => {
  await server.close();
});

describe('SessionChatTransport with the AI SDK Chat', () => {
  it('sends a message and streams the echo reply to completion', async () => {
    const { transport, events } = createTransport(server);
    const chat = new TestChat({ id: 'happy-1', transport });
    await chat.sendMessage({ text: 'hello there, durable world' });
    expect(chat.status).toBe('ready');
    expect(transcript(chat.messages)).toEqual([
      'user: hello there, durable world',
      'assistant: Echo: hello there, durable world',
    ]);
    expect(events.map((e) => e.type)).toContain('turn-completed');
    await chat.sendMessage({ text: 'second' });
    expect(transcript(chat.messages).slice(2)).toEqual(['user: second', 'assistant: Echo: second']);
    transport.close();
  });
});
