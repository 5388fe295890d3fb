import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevServer } from '../../src/dev-server/index.js';
import { SessionChatTransport } from '../../src/transport/session-chat-transport.js';
import {
  startEchoServer,
  startSessionVia,
  TestChat,
  uniqueChatId,
  waitFor,
} from './support/dev-server-fixture.js';

/**
 * Memory at scale: a turn's end aborts its `.out` read with one shared reason, not a new
 * `AbortError` (a captured stack, formatted again by Node's streams) per chat. Defaults.
 */
let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer();
});
afterAll(async () => {
  await server.close();
});

describe('the end of a turn stream', () => {
  it("aborts every chat's .out read with one shared AbortError", async () => {
    const outSignals: AbortSignal[] = [];
    const transport = new SessionChatTransport({
      baseURL: server.url,
      taskIdentifier: 'echo',
      startSession: startSessionVia(server),
      environment: { warn: () => {} },
      fetch: (input, init) => {
        if (String(input).endsWith('/out') && init?.signal) outSignals.push(init.signal);
        return fetch(input, init);
      },
    });
    for (const text of ['one', 'two']) {
      const chat = new TestChat({ id: uniqueChatId('abort-reason'), transport });
      await chat.sendMessage({ text });
      expect(chat.messages[1]?.parts.some((part) => part.type === 'text')).toBe(true);
    }
    await waitFor(
      () => outSignals.length >= 2 && outSignals.every((signal) => signal.aborted),
      5_000,
      'the reads to end',
    );
    const reasons = new Set(outSignals.map((signal) => signal.reason));
    expect(reasons.size).toBe(1);
    const [reason] = reasons;
    expect(reason).toBeInstanceOf(DOMException);
    expect((reason as DOMException).name).toBe('AbortError');
    transport.close();
  });
});
