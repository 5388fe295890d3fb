import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevServer } from '../../src/dev-server/index.js';
import type { StartSessionInput, StartSessionResult } from '../../src/index.js';
import { SessionChatTransport } from '../../src/transport/session-chat-transport.js';
import {
  startEchoServer,
  startSessionVia,
  TestChat,
  transcript,
  uniqueChatId,
  waitFor,
} from './support/dev-server-fixture.js';

/**
 * The moment before any append: the chat's session is still starting (the app's route is slow,
 * or retried). A stop there settles the send at once and sends nothing; a leave there (an abort
 * and a disconnect in the same tick) lets the message go out once the session exists. Default
 * options throughout.
 */
let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer();
});
afterAll(async () => {
  await server.close();
});

/** A chat route whose starts wait until `release()`. */
function heldStart() {
  const route = startSessionVia(server);
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  const state = { calls: 0 };
  const startSession = async (input: StartSessionInput): Promise<StartSessionResult> => {
    state.calls += 1;
    await gate;
    return route(input);
  };
  return { startSession, release: () => open(), state };
}

function transportWith(startSession: (input: StartSessionInput) => Promise<StartSessionResult>) {
  return new SessionChatTransport({
    baseURL: server.url,
    taskIdentifier: 'echo',
    startSession,
    environment: { warn: () => {} },
  });
}

/** A new chat whose first send waits on `startSession`; resolves once the start was called. */
async function sendingWhileStarting(
  startSession: (input: StartSessionInput) => Promise<StartSessionResult>,
  calls: () => number,
  name: string,
) {
  const transport = transportWith(startSession);
  const chatId = uniqueChatId(name);
  const errors: unknown[] = [];
  const chat = new TestChat({ id: chatId, transport, onError: (error) => errors.push(error) });
  const sending = chat.sendMessage({ text: name });
  await waitFor(() => calls() === 1, 5_000, 'the session start');
  return { transport, chatId, chat, sending, errors };
}

/** Resolves once `sending` settled; fails after 2 s (the start it stopped is still held then). */
async function settles(sending: Promise<unknown>): Promise<void> {
  let settled = false;
  void sending.then(() => {
    settled = true;
  });
  await waitFor(() => settled, 2_000, 'the send to settle');
}

describe('a send while the chat’s session is still starting', () => {
  it('stopped there (useChat’s stop): the send settles at once, ready, no error; nothing is appended', async () => {
    const held = heldStart();
    const { transport, chatId, chat, sending, errors } = await sendingWhileStarting(
      held.startSession,
      () => held.state.calls,
      'stop-during-start',
    );
    await chat.stop();
    // The route still holds the start: the stop does not wait for it.
    await settles(sending);
    expect(chat.status).toBe('ready');
    expect(chat.error).toBeUndefined();
    expect(errors).toEqual([]);
    held.release();
    await transport.getClient(chatId).preload();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(server.inspect(chatId)?.in.nextSeq ?? 0).toBe(0);
    // The next send goes out as usual, on the session the first start made.
    await chat.sendMessage({ text: 'hello again' });
    expect(transcript(chat.messages).slice(-2)).toEqual([
      'user: hello again',
      'assistant: Echo: hello again',
    ]);
    expect(held.state.calls).toBe(1);
    transport.close();
  });

  it('left there (an abort and a disconnect in the same tick): settles at once, nothing sent, as a leave before the append at any moment on this path', async () => {
    const held = heldStart();
    const { transport, chatId, chat, sending, errors } = await sendingWhileStarting(
      held.startSession,
      () => held.state.calls,
      'leave-during-start',
    );
    const stopping = chat.stop();
    transport.disconnect(chatId);
    await stopping;
    await settles(sending);
    expect(chat.error).toBeUndefined();
    expect(errors).toEqual([]);
    held.release();
    await transport.getClient(chatId).preload();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(server.inspect(chatId)?.in.nextSeq ?? 0).toBe(0);
    transport.close();
  });

  it('the start failing after the stop (default retries): nothing reported for the stopped send; the next send starts again and is answered', async () => {
    const route = startSessionVia(server);
    let calls = 0;
    let fail!: () => void;
    const failing = new Promise<never>((_, reject) => {
      fail = () => reject(new TypeError('Failed to fetch'));
    });
    // The first start hangs, then fails, and so do its retries (6 attempts by default); the
    // next send's start succeeds.
    const startSession = (input: StartSessionInput): Promise<StartSessionResult> => {
      calls += 1;
      if (calls === 1) return failing;
      return calls <= 6 ? Promise.reject(new TypeError('Failed to fetch')) : route(input);
    };
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const { transport, chat, sending, errors } = await sendingWhileStarting(
        startSession,
        () => calls,
        'start-fails-after-stop',
      );
      await chat.stop();
      await settles(sending);
      fail();
      await waitFor(() => calls === 6, 15_000, 'the start’s retries');
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(errors).toEqual([]);
      expect(unhandled).toEqual([]);
      await chat.sendMessage({ text: 'again' });
      expect(transcript(chat.messages).slice(-2)).toEqual(['user: again', 'assistant: Echo: again']);
      expect(calls).toBe(7);
      transport.close();
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
