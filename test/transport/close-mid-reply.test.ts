import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevServer } from '../../src/dev-server/index.js';
import { SessionClosedError } from '../../src/errors/http-error.js';
import {
  createTransport,
  startEchoServer,
  TestChat,
  uniqueChatId,
  waitFor,
} from './support/dev-server-fixture.js';

/**
 * The session is closed on the server in the middle of a reply (an admin's close, an account
 * deleted): the run ends and `.out` says nothing more. Default options.
 */
let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer();
});
afterAll(async () => {
  await server.close();
});

describe('a session closed mid-reply', () => {
  it('ends the turn with SESSION_CLOSED naming the reason and the fix; a later send is refused without a request', async () => {
    const chatId = uniqueChatId('close-mid-reply');
    const { transport, events } = createTransport(server, { retry: undefined });
    const chat = new TestChat({ id: chatId, transport });
    await chat.sendMessage({ text: 'hello one' });
    await waitFor(() => chat.status === 'ready', 10_000, 'the first turn');
    server.faults.closeMidTurn({ afterChunks: 3, sessionId: chatId, reason: 'account deleted' });
    await chat.sendMessage({ text: 'a reply cut by the close' });
    await waitFor(() => chat.status === 'error', 30_000, 'the turn to fail');
    const error = chat.error as SessionClosedError;
    expect(error).toBeInstanceOf(SessionClosedError);
    expect(error).toMatchObject({ code: 'SESSION_CLOSED', closedReason: 'account deleted' });
    // The close was learned from the chat's own state, not from a 409 on `.out`: the message must
    // not say a read failed with HTTP 409, and it says why and what to do.
    expect(error.message).not.toContain('HTTP 409');
    expect(error.message).toContain('account deleted');
    expect(error.message).toContain('start a new chat');
    expect(events.filter((event) => event.type === 'session-closed')).toEqual([
      expect.objectContaining({ chatId, reason: 'account deleted' }),
    ]);
    const stored = server.inspect(chatId)?.in.nextSeq;
    await chat.sendMessage({ text: 'after the close' });
    await waitFor(() => chat.status === 'error', 5_000, 'the refused send');
    expect(chat.error).toMatchObject({ code: 'SESSION_CLOSED', closedReason: 'account deleted' });
    expect(server.inspect(chatId)?.in.nextSeq).toBe(stored);
  }, 60_000);
});
