import { setTimeout as sleep } from 'node:timers/promises';
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
 * And the resume's request ends before the send's reply shows: the AI SDK reads both streams at
 * once, and an app that saves in `onFinish` saved the second reply with the first (or an empty
 * message for it) when the send's chunks came first.
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
  it.each([
    ['the resume’s read answered first', false],
    ['the send’s reply read before the resume’s read is answered', true],
  ])('shows both replies, each once and in turn (%s); two appends; no error', async (_moment, late) => {
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
    let atResumeEnd: string[] | undefined;
    void world.resume(page).then(() => {
      atResumeEnd = world.transcript(page);
    });
    await waitFor(() => page.page.holding === 1, BOUND_MS, 'the resume’s read, held');
    world.send(MATRIX_OTHER_TEXT, page);
    await waitFor(() => page.page.appendsSent >= 1, BOUND_MS, 'the second append sent');
    if (late) {
      // Both turns end on the server, and the send's own read gets there, before the resume's
      // read has its answer: the second reply is on this page first.
      pause.release();
      await waitFor(() => world.turnsCompleted() >= 1, BOUND_MS, 'both turns over on the server');
      await sleep(100);
      page.page.release();
    } else {
      page.page.release();
      pause.release();
    }
    await world.settle(page);
    await waitFor(() => page.chat.status === 'ready', BOUND_MS, 'the chat ready');
    const texts = world.transcript(page);
    expect(texts.filter((line) => line === echoReply(MATRIX_TEXT))).toHaveLength(1);
    expect(texts.filter((line) => line === echoReply(MATRIX_OTHER_TEXT))).toHaveLength(1);
    expect(texts.filter((line) => line === `user: ${MATRIX_OTHER_TEXT}`)).toHaveLength(1);
    expect(server.inspect(chatId)?.in.nextSeq).toBe(2);
    expect(page.errors).toEqual([]);
    // The resumed turn's request ended with its own reply last, before the send's began.
    expect(atResumeEnd).toEqual([
      `user: ${MATRIX_TEXT}`,
      `user: ${MATRIX_OTHER_TEXT}`,
      echoReply(MATRIX_TEXT),
    ]);
    await world.close();
  });
});
