import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryPersistence } from '../../src/client/persistence.js';
import { type DevServer, echoAgent } from '../../src/dev-server/index.js';
import {
  createTransport,
  startEchoServer,
  TestChat,
  transcript,
  uniqueChatId,
  waitFor,
} from './support/dev-server-fixture.js';

/**
 * A send right after a stop, without the append's `seq` or `session-in-event-id`: the
 * stopped turn's turn-complete can land after the new send read `.out`'s live edge (the
 * agent winds the turn down first). It is the stopped turn's, never the new send's.
 */
let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer({
    wire: { appendSeq: false, sessionInEventId: false },
    // The agent takes a while to wind a stopped turn down (an `onStop` hook that saves).
    agents: [{ ...echoAgent, onStop: () => new Promise<void>((resolve) => setTimeout(resolve, 400)) }],
  });
});
afterAll(async () => {
  await server.close();
});

describe('a send after a stop whose turn-complete is still to come', () => {
  it('skips the stopped turn’s late turn-complete and shows its own reply', async () => {
    const { transport } = createTransport(server, { clientData: { delayMs: 40 } });
    const chat = new TestChat({ id: uniqueChatId('send-after-stop'), transport });
    const sending = chat.sendMessage({ text: 'a fairly long message that streams slowly' });
    await waitFor(() => chat.status === 'streaming');
    await chat.stop();
    await sending;
    // The stop is stored (the chat is no longer live); the agent has not finished the turn.
    await waitFor(() => !transport.getState(chat.id).turnLive, 5_000, 'the stop to be stored');
    await chat.sendMessage({ text: 'next' }, { metadata: { delayMs: 0 } });
    expect(chat.error).toBeUndefined();
    expect(transcript(chat.messages).slice(2)).toEqual(['user: next', 'assistant: Echo: next']);
    transport.close();
  });

  it('the same after transport.stop(chatId) on the turn this page streams', async () => {
    const { transport } = createTransport(server, { clientData: { delayMs: 40 } });
    const chat = new TestChat({ id: uniqueChatId('stop-by-id'), transport });
    const sending = chat.sendMessage({ text: 'a fairly long message that streams slowly' });
    await waitFor(() => chat.status === 'streaming');
    await transport.stop(chat.id);
    await sending;
    expect(transport.getState(chat.id).turnLive).toBe(false);
    await chat.sendMessage({ text: 'next' }, { metadata: { delayMs: 0 } });
    expect(chat.error).toBeUndefined();
    expect(transcript(chat.messages).slice(2)).toEqual(['user: next', 'assistant: Echo: next']);
    transport.close();
  });

  it('the same after a reload: a stop from a page that has no reader of the turn', async () => {
    const persistence = memoryPersistence();
    const chatId = uniqueChatId('stop-after-reload');
    const first = createTransport(server, { clientData: { delayMs: 40 }, persistence }).transport;
    const chat = new TestChat({ id: chatId, transport: first });
    void chat.sendMessage({ text: 'a fairly long message that streams slowly' });
    await waitFor(() => chat.status === 'streaming');
    first.disconnect(chatId); // the page goes away mid-reply; the agent keeps going
    first.close();
    const second = createTransport(server, { clientData: { delayMs: 40 }, persistence }).transport;
    await second.stop(chatId);
    expect(second.getState(chatId).turnLive).toBe(false);
    const next = new TestChat({ id: chatId, transport: second });
    await next.sendMessage({ text: 'next' }, { metadata: { delayMs: 0 } });
    expect(next.error).toBeUndefined();
    expect(transcript(next.messages)).toEqual(['user: next', 'assistant: Echo: next']);
    second.close();
  });

  it('issue 18 item 16: stop, reload, send: the stopped turn’s late records stay out of the new reply', async () => {
    const persistence = memoryPersistence();
    const chatId = uniqueChatId('stop-then-reload');
    const first = createTransport(server, { clientData: { delayMs: 40 }, persistence }).transport;
    const chat = new TestChat({ id: chatId, transport: first });
    const sending = chat.sendMessage({ text: 'a fairly long message that streams slowly' });
    await waitFor(() => chat.status === 'streaming');
    await chat.stop();
    await sending;
    await waitFor(() => !first.getState(chatId).turnLive, 5_000, 'the stop to be stored');
    await first.getClient(chatId).flushPersistence();
    first.close(); // the page reloads before the agent wound the stopped turn down
    const second = createTransport(server, { clientData: { delayMs: 40 }, persistence }).transport;
    const next = new TestChat({ id: chatId, transport: second, messages: chat.messages });
    await next.sendMessage({ text: 'next' }, { metadata: { delayMs: 0 } });
    expect(next.error).toBeUndefined();
    expect(transcript(next.messages).slice(-2)).toEqual(['user: next', 'assistant: Echo: next']);
    second.close();
  });
});
