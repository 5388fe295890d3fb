import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevServer } from '../../src/dev-server/index.js';
import { uniqueChatId, waitFor } from './support/dev-server-fixture.js';
import {
  BOUND_MS,
  echoReply,
  MATRIX_OTHER_TEXT,
  MATRIX_TEXT,
  MID_REPLY_CHUNK,
  pauseTurn,
  startMomentsServer,
  World,
} from './support/moments.js';

/**
 * A page reloaded mid-reply resumes the live turn; its read has not been answered yet (a slow
 * or half-open connection) when the user sends the next message. The send drains the resumed
 * turn (it is read to its end behind the new one): the resume must still show that turn's
 * reply. It returned nothing once the send had moved its turn, and the reply was lost for good.
 * Default options, the AI SDK's own Chat.
 */
let server: DevServer;
beforeAll(async () => {
  server = await startMomentsServer();
});
afterAll(async () => {
  await server.close();
});

describe('a send while a reloaded page’s resume waits for its first answer', () => {
  it('shows both replies, each once; two appends; no error', async () => {
    const chatId = uniqueChatId('send-during-resume');
    const world = new World(server, chatId);
    const pause = pauseTurn(chatId, MATRIX_TEXT, MID_REPLY_CHUNK);
    world.send(MATRIX_TEXT);
    await waitFor(() => pause.reached, BOUND_MS, 'the reply under way');
    const old = world.current;
    const saved = world.saved(old);
    await world.killPage(old);
    const page = world.device(old.persistence, saved);
    world.current = page;
    page.page.holdOutRequest();
    world.resume(page);
    await waitFor(() => page.page.holding === 1, BOUND_MS, 'the resume’s read, held');
    world.send(MATRIX_OTHER_TEXT, page);
    await waitFor(() => page.page.appendsSent >= 1, BOUND_MS, 'the second append sent');
    page.page.release();
    pause.release();
    await world.settle(page);
    await waitFor(() => page.chat.status === 'ready', BOUND_MS, 'the chat ready');
    const texts = world.transcript(page);
    expect(texts.filter((line) => line === echoReply(MATRIX_TEXT))).toHaveLength(1);
    expect(texts.filter((line) => line === echoReply(MATRIX_OTHER_TEXT))).toHaveLength(1);
    expect(texts.filter((line) => line === `user: ${MATRIX_OTHER_TEXT}`)).toHaveLength(1);
    expect(server.inspect(chatId)?.in.nextSeq).toBe(2);
    expect(page.errors).toEqual([]);
    await world.close();
  });
});
