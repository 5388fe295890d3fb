import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClientEnvironment } from '../../src/client/environment.js';
import { memoryPersistence, type SessionPersistence } from '../../src/client/persistence.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { stopChunk } from '../../src/protocol/input-chunks.js';
import { SessionChatTransport } from '../../src/transport/session-chat-transport.js';
import {
  type RecordedRequest,
  readAll,
  recordingFetch,
  startEchoServer,
  startSessionVia,
  uniqueChatId,
  userMessage,
  waitFor,
} from './support/dev-server-fixture.js';

/**
 * The first send of a chat whose session this page's own `startSession` created
 * (`isCached: false`): `.out` is empty, so the append goes out at once instead of after
 * reading `.out` for the live edge (and, on an empty stream, a grace period). Time is an
 * injected clock that only moves when the test says, so "no timer fired before the append"
 * is exact, with the library's default options.
 */
let server: DevServer;
beforeAll(async () => {
  // A ping's `tail` also tells a send where the live edge is; pings far apart (a server
  // option) leave the grace timer as the only other way, so a send that waits shows.
  server = await startEchoServer({ pingIntervalMs: 600_000 });
});
afterAll(async () => {
  await server.close();
});

/** Timers that fire only when the test moves the clock. */
function heldClock() {
  let offset = 0;
  let nextId = 1;
  const timers = new Map<number, { at: number; callback: () => void }>();
  const now = () => Date.now() + offset;
  const environment: Pick<ClientEnvironment, 'now' | 'setTimeout' | 'clearTimeout'> = {
    now,
    setTimeout(callback, ms) {
      const id = nextId++;
      timers.set(id, { at: now() + ms, callback });
      return id;
    },
    clearTimeout(id) {
      timers.delete(id as number);
    },
  };
  let fired = 0;
  return {
    environment,
    fired: () => fired,
    /** Moves the clock `ms` forward, firing what falls due, in due order. */
    advance(ms: number) {
      offset += ms;
      for (;;) {
        const due = [...timers.entries()].filter(([, t]) => t.at <= now()).sort((a, b) => a[1].at - b[1].at);
        if (due.length === 0) return;
        for (const [id, timer] of due) {
          timers.delete(id);
          fired++;
          timer.callback();
        }
      }
    },
  };
}

const isAppend = (request: RecordedRequest) => request.path.endsWith('/in/append');

function pageFor(
  options: { reportIsCached?: boolean; persistence?: SessionPersistence; counter?: { calls: number } } = {},
) {
  const clock = heldClock();
  const recorder = recordingFetch();
  const transport = new SessionChatTransport({
    baseURL: server.url,
    taskIdentifier: 'echo',
    startSession: startSessionVia(server, options.counter, { reportIsCached: options.reportIsCached }),
    fetch: recorder.fetch,
    persistence: options.persistence,
    environment: { warn: () => {}, ...clock.environment },
  });
  return { transport, clock, requests: recorder.requests };
}

async function send(transport: SessionChatTransport, chatId: string, text: string) {
  return transport.sendMessages({
    trigger: 'submit-message',
    chatId,
    messageId: undefined,
    messages: [userMessage(text)],
    abortSignal: undefined,
  });
}

function replyText(chunks: { type: string; delta?: string }[]): string {
  return chunks
    .filter((chunk) => chunk.type === 'text-delta')
    .map((chunk) => chunk.delta)
    .join('');
}

/** The send is waiting to learn the live edge: `.out` is open, the append has not gone out. */
async function expectHeldBeforeAppend(requests: RecordedRequest[]): Promise<void> {
  await waitFor(() => requests.some((request) => request.path.endsWith('/out')), 5_000, 'the .out read');
  await new Promise((resolve) => setTimeout(resolve, 300)); // real time: the server had its chance
  expect(requests.some(isAppend)).toBe(false);
}

describe('the first send of a session this page created', () => {
  it('appends without waiting for any timer, and the reply is its own', async () => {
    const chatId = uniqueChatId('created-first-send');
    const { transport, clock, requests } = pageFor();
    const sending = send(transport, chatId, 'hello new chat');
    await waitFor(() => requests.some(isAppend), 2_000, 'the append');
    const chunks = await readAll(await sending);
    expect(clock.fired()).toBe(0);
    expect(replyText(chunks)).toBe('Echo: hello new chat');
    expect(transport.getState(chatId)).toMatchObject({ turnLive: false });
    // The second send knows the edge from the first turn's end: no timer either.
    expect(replyText(await readAll(await send(transport, chatId, 'and again')))).toBe('Echo: and again');
    expect(clock.fired()).toBe(0);
    transport.close();
  });

  it('after preload, and after startSession was called again (a liveness check, a token): still at once', async () => {
    const chatId = uniqueChatId('created-preload');
    const counter = { calls: 0 };
    const { transport, clock, requests } = pageFor({ counter });
    await transport.preload(chatId);
    // A repeated create answers `isCached: true`; it must not undo what the first one said.
    expect(await transport.getClient(chatId).checkRun()).toMatchObject({ currentRunId: expect.any(String) });
    expect(counter.calls).toBe(2);
    expect(transport.getClient(chatId).outKnownEmpty).toBe(true);
    const sending = send(transport, chatId, 'after preload');
    await waitFor(() => requests.some(isAppend), 2_000, 'the append');
    expect(replyText(await readAll(await sending))).toBe('Echo: after preload');
    expect(clock.fired()).toBe(0);
    transport.close();
  });
});

describe('when `.out` may hold earlier turns, the send still reads to the live edge first', () => {
  async function expectLocated(page: ReturnType<typeof pageFor>, chatId: string, text: string) {
    const sending = send(page.transport, chatId, text);
    await expectHeldBeforeAppend(page.requests);
    page.clock.advance(1_000); // the empty stream's grace period passes
    await waitFor(() => page.requests.some(isAppend), 2_000, 'the append');
    expect(replyText(await readAll(await sending))).toBe(`Echo: ${text}`);
  }

  it('startSession does not report isCached (an older route): reads first, as before', async () => {
    const chatId = uniqueChatId('created-unreported');
    const page = pageFor({ reportIsCached: false });
    await expectLocated(page, chatId, 'no isCached');
    page.transport.close();
  });

  it('the session already existed (isCached: true), e.g. created by another page', async () => {
    const chatId = uniqueChatId('created-elsewhere');
    await startSessionVia(server)({ chatId, taskIdentifier: 'echo', clientData: undefined });
    const page = pageFor();
    await expectLocated(page, chatId, 'joined an existing session');
    page.transport.close();
  });

  it('after a reload: the session came from persistence, not from this page’s create', async () => {
    const chatId = uniqueChatId('created-reload');
    const persistence = memoryPersistence();
    const first = pageFor({ persistence });
    await first.transport.preload(chatId);
    await first.transport.getClient(chatId).flushPersistence();
    first.transport.close();
    const counter = { calls: 0 };
    const reloaded = pageFor({ persistence, counter });
    await expectLocated(reloaded, chatId, 'after a reload');
    // Without a scope the record keeps no token: the reloaded page is authorized once, and
    // that start's `isCached: true` does not make it take `.out` for empty.
    expect(counter.calls).toBe(1);
    reloaded.transport.close();
  });

  it('something was appended through this page first (an action, a stop)', async () => {
    const chatId = uniqueChatId('created-appended');
    const page = pageFor();
    await page.transport.preload(chatId);
    const client = page.transport.getClient(chatId);
    expect(client.outKnownEmpty).toBe(true);
    await client.append(stopChunk());
    expect(client.outKnownEmpty).toBe(false);
    const before = page.requests.filter(isAppend).length;
    const sending = send(page.transport, chatId, 'after a stop');
    await waitFor(
      () => page.requests.some((request) => request.path.endsWith('/out')),
      5_000,
      'the .out read',
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(page.requests.filter(isAppend).length).toBe(before);
    page.clock.advance(1_000);
    expect(replyText(await readAll(await sending))).toBe('Echo: after a stop');
    page.transport.close();
  });
});
