import type { UIMessageChunk } from 'ai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { memoryPersistence } from '../../src/client/persistence.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { isDurableChatError } from '../../src/errors/durable-chat-error.js';
import { SessionChatTransport } from '../../src/transport/session-chat-transport.js';
import type { SessionChatTransportOptions } from '../../src/transport/transport-options.js';
import {
  readAll,
  startEchoServer,
  TestChat,
  transcript,
  uniqueChatId,
  userMessage,
  waitFor,
} from './support/dev-server-fixture.js';
import {
  type HeadStartApp,
  historyAgent,
  routeModel,
  startHeadStartApp,
  streamTextReply,
} from './support/head-start-app.js';

function textOf(chunks: UIMessageChunk[]): string {
  return chunks.map((chunk) => (chunk.type === 'text-delta' ? chunk.delta : '')).join('');
}

function headStartTransport(
  server: DevServer,
  app: HeadStartApp,
  overrides: Partial<SessionChatTransportOptions> = {},
): SessionChatTransport {
  return new SessionChatTransport({
    baseURL: server.url,
    taskIdentifier: 'echo',
    startSession: app.callbacks.startSession,
    getAccessToken: app.callbacks.getAccessToken,
    headStart: { api: app.headStartUrl },
    ...overrides,
  });
}

describe('head start against the dev server', () => {
  const history = historyAgent();
  let server: DevServer;
  let app: HeadStartApp;
  beforeAll(async () => {
    server = await startEchoServer({ agents: [history.agent] });
    app = await startHeadStartApp(server, streamTextReply(routeModel()));
  });
  afterAll(async () => {
    await app.close();
    await server.close();
  });
  afterEach(() => {
    history.seen.length = 0;
  });

  it('answers the first turn from the route, the second through .in, nothing twice; the agent has the history', async () => {
    const transport = headStartTransport(server, app);
    const chatId = uniqueChatId('head-start');
    const chat = new TestChat({ id: chatId, transport });
    const before = { ...app.calls };
    await chat.sendMessage({ text: 'hello there' });
    expect(chat.error).toBeUndefined();
    expect(transcript(chat.messages)).toEqual(['user: hello there', 'assistant: Route: hello there']);
    // The route made the session; the chat route's start was never needed.
    expect(app.calls.headStart - before.headStart).toBe(1);
    expect(app.calls.start - before.start).toBe(0);
    expect(transport.getState(chatId).sessionId).toMatch(/^session_/);
    // The agent took the history over without answering it: `.out` holds its turn-complete
    // and that one's trim command, no content.
    await waitFor(() => server.inspect(chatId)?.in.acknowledgedSeq === 0, 5_000, 'the handover taken');
    expect(server.inspect(chatId)?.out.records).toBe(2);

    await chat.sendMessage({ text: 'and again' });
    expect(chat.error).toBeUndefined();
    expect(transcript(chat.messages)).toEqual([
      'user: hello there',
      'assistant: Route: hello there',
      'user: and again',
      'assistant: Echo: and again',
    ]);
    expect(app.calls.headStart - before.headStart).toBe(1);
    // The agent ran once, for the second turn, with the first turn in its history.
    expect(history.seen).toEqual([['user: hello there', 'assistant: Route: hello there', 'user: and again']]);
    // One reply per turn on the wire of the second turn too: the assistant message ids differ.
    expect(new Set(chat.messages.map((message) => message.id)).size).toBe(4);
    transport.close();
  });

  it('keeps the route’s own chunks out of the stream and adopts the session only once handed over', async () => {
    const transport = headStartTransport(server, app);
    const chatId = uniqueChatId('head-start-chunks');
    const stream = await transport.sendMessages({
      trigger: 'submit-message',
      chatId,
      messageId: undefined,
      messages: [userMessage('one two three')],
      abortSignal: undefined,
    });
    const chunks = await readAll(stream);
    expect(chunks.filter((chunk) => chunk.type.startsWith('data-durable-chat'))).toEqual([]);
    expect(chunks.filter((chunk) => chunk.type === 'start')).toHaveLength(1);
    expect(textOf(chunks)).toBe('Route: one two three');
    const client = transport.getClient(chatId);
    // Adopted as a session made elsewhere: the handover's turn-complete may still be coming.
    expect(client.sessionPreexisted).toBe(true);
    expect(client.outKnownEmpty).toBe(false);
    // The handover came with its `.in` seq: the next send tells its turn-complete apart by seq.
    expect(transport.getState(chatId).stoppedTurn).toBeUndefined();
    expect(transport.getState(chatId)).toMatchObject({
      turnLive: false,
      sessionId: expect.stringMatching(/^session_/),
    });
    transport.close();
  });

  it('sends through .in when the chat has a session already (409 SESSION_EXISTS from the route)', async () => {
    const chatId = uniqueChatId('head-start-exists');
    const first = headStartTransport(server, app);
    const firstChat = new TestChat({ id: chatId, transport: first });
    await firstChat.sendMessage({ text: 'from the laptop' });
    first.close();
    // Another device, no stored state: its first send tries a head start, then goes to `.in`.
    const other = headStartTransport(server, app);
    const before = { ...app.calls };
    const stream = await other.sendMessages({
      trigger: 'submit-message',
      chatId,
      messageId: undefined,
      messages: [userMessage('from the phone')],
      abortSignal: undefined,
    });
    expect(textOf(await readAll(stream))).toBe('Echo: from the phone');
    expect(app.calls.headStart - before.headStart).toBe(1);
    expect(app.calls.start - before.start).toBe(1);
    expect(history.seen.at(-1)).toEqual([
      'user: from the laptop',
      'assistant: Route: from the laptop',
      'user: from the phone',
    ]);
    other.close();
  });

  it('refusals and bad answers of the route are typed errors', async () => {
    const refusing = await startHeadStartApp(server, streamTextReply(routeModel()), {
      authorize: () => false,
    });
    try {
      const transport = headStartTransport(server, refusing);
      const sent = transport.sendMessages({
        trigger: 'submit-message',
        chatId: uniqueChatId('head-start-refused'),
        messageId: undefined,
        messages: [userMessage('let me in')],
        abortSignal: undefined,
      });
      await expect(sent).rejects.toMatchObject({ code: 'FORBIDDEN', status: 403, serverCode: 'FORBIDDEN' });
      transport.close();
    } finally {
      await refusing.close();
    }
    const response = await fetch(app.headStartUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        kind: 'message',
        payload: { chatId: 'x', trigger: 'submit-message', message: userMessage('hi') },
      }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('a model failure mid-reply errors the stream with HEAD_START_FAILED; the agent keeps what was said and answers nothing', async () => {
    const failing = await startHeadStartApp(server, streamTextReply(routeModel({ failAfter: 4 })));
    try {
      const transport = headStartTransport(server, failing);
      const chatId = uniqueChatId('head-start-model-fails');
      const chat = new TestChat({ id: chatId, transport, onError: () => {} });
      await chat.sendMessage({ text: 'break please' });
      expect(chat.status).toBe('error');
      expect(isDurableChatError(chat.error)).toBe(true);
      expect((chat.error as { code?: string }).code).toBe('HEAD_START_FAILED');
      // The real failure stays on the server.
      expect(chat.error?.message).not.toContain('provider');
      expect(failing.errors.length).toBeGreaterThan(0);
      // The chat goes on through `.in`, and the agent knows the first question.
      await chat.sendMessage({ text: 'second try' });
      expect(chat.error).toBeUndefined();
      expect(transcript(chat.messages).at(-1)).toBe('assistant: Echo: second try');
      expect(history.seen.at(-1)?.[0]).toBe('user: break please');
      expect(history.seen.at(-1)?.at(-1)).toBe('user: second try');
      transport.close();
    } finally {
      await failing.close();
    }
  });

  it('useChat’s stop mid-reply ends the reply there, no error; the agent keeps the partial reply and answers nothing', async () => {
    const slow = await startHeadStartApp(server, streamTextReply(routeModel({ chunkDelayMs: 40 })));
    try {
      const transport = headStartTransport(server, slow);
      const chatId = uniqueChatId('head-start-stop');
      const chat = new TestChat({ id: chatId, transport });
      const sent = chat.sendMessage({ text: 'one two three four five six seven eight' });
      await waitFor(
        () => (transcript(chat.messages)[1] ?? '').length > 'assistant: Route: one'.length,
        5_000,
        'some reply',
      );
      await chat.stop();
      await sent;
      expect(chat.error).toBeUndefined();
      const shown = transcript(chat.messages)[1]?.replace('assistant: ', '') ?? '';
      expect(shown.length).toBeLessThan('Route: one two three four five six seven eight'.length);
      await waitFor(() => server.inspect(chatId)?.in.acknowledgedSeq === 0, 5_000, 'the handover taken');
      await chat.sendMessage({ text: 'next' });
      expect(chat.error).toBeUndefined();
      expect(transcript(chat.messages).slice(2)).toEqual(['user: next', 'assistant: Echo: next']);
      const seen = history.seen.at(-1) ?? [];
      expect(seen).toHaveLength(3);
      expect(seen[1]?.startsWith(`assistant: ${shown}`)).toBe(true);
      transport.close();
    } finally {
      await slow.close();
    }
  });

  it('a stop before the reply began: the agent (booting) gets the question and a stop, and never answers it', async () => {
    // A head start meets a booting agent: the stop is on `.in` before the run reads the handover.
    // (A warm agent may begin answering before the stop lands, as after any message sent just
    // before a stop; that reply is never shown: the next send skips it.)
    const cold = historyAgent();
    const coldServer = await startEchoServer({ agents: [cold.agent], bootDelayMs: 500 });
    const late = await startHeadStartApp(coldServer, streamTextReply(routeModel({ firstChunkDelayMs: 300 })));
    try {
      const transport = headStartTransport(coldServer, late);
      const chatId = uniqueChatId('head-start-early-stop');
      const abort = new AbortController();
      const stream = await transport.sendMessages({
        trigger: 'submit-message',
        chatId,
        messageId: undefined,
        messages: [userMessage('never mind', 'u1')],
        abortSignal: abort.signal,
      });
      abort.abort();
      expect(textOf(await readAll(stream))).toBe('');
      // The handover (the question alone) and the stop after it, both taken.
      await waitFor(
        () => coldServer.inspect(chatId)?.in.acknowledgedSeq === 1,
        5_000,
        'handover and stop taken',
      );
      const next = await transport.sendMessages({
        trigger: 'submit-message',
        chatId,
        messageId: undefined,
        messages: [userMessage('never mind', 'u1'), userMessage('something else', 'u2')],
        abortSignal: undefined,
      });
      expect(textOf(await readAll(next))).toBe('Echo: something else');
      const seen = cold.seen.at(-1) ?? [];
      expect(seen[0]).toBe('user: never mind');
      expect(seen.at(-1)).toBe('user: something else');
      expect(seen.filter((line) => line.startsWith('assistant: Echo'))).toEqual([]);
      transport.close();
    } finally {
      await late.close();
      await coldServer.close();
    }
  });

  it('a reload mid-reply ends that reply where it was: the agent keeps the partial reply, the reloaded page goes on through .in', async () => {
    const slow = await startHeadStartApp(server, streamTextReply(routeModel({ chunkDelayMs: 40 })));
    try {
      const persistence = memoryPersistence();
      const chatId = uniqueChatId('head-start-reload');
      const page = headStartTransport(server, slow, { persistence });
      const stream = await page.sendMessages({
        trigger: 'submit-message',
        chatId,
        messageId: undefined,
        messages: [userMessage('one two three four five six seven eight nine ten', 'u1')],
        abortSignal: undefined,
      });
      const reader = stream.getReader();
      let shown = '';
      while (shown.split(' ').length < 3) {
        const { value } = await reader.read();
        if (value?.type === 'text-delta') shown += value.delta;
      }
      await reader.cancel(); // the page goes away
      page.close();
      // The route hands over what it said; the agent takes it without answering.
      await waitFor(() => server.inspect(chatId)?.in.acknowledgedSeq === 0, 5_000, 'the handover taken');
      expect(server.inspect(chatId)?.out.records).toBe(2);

      const reloaded = headStartTransport(server, slow, { persistence });
      // The head-start reply was never on `.out`: there is nothing to resume.
      expect(await reloaded.reconnectToStream({ chatId })).toBeNull();
      const next = await reloaded.sendMessages({
        trigger: 'submit-message',
        chatId,
        messageId: undefined,
        messages: [userMessage('are you there', 'u2')],
        abortSignal: undefined,
      });
      expect(textOf(await readAll(next))).toBe('Echo: are you there');
      const seen = history.seen.at(-1) ?? [];
      expect(seen).toHaveLength(3);
      expect(seen[0]).toBe('user: one two three four five six seven eight nine ten');
      const partial = seen[1]?.replace('assistant: ', '') ?? '';
      expect(partial.startsWith(shown)).toBe(true);
      expect(partial).not.toBe('Route: one two three four five six seven eight nine ten');
      expect(history.seen).toHaveLength(1); // the first question was never answered again
      reloaded.close();
    } finally {
      await slow.close();
    }
  });
});

describe('head start against an agent that boots cold', () => {
  const wires = [
    ['with seq and session-in-event-id', { appendSeq: true, sessionInEventId: true }],
    ['on a wire without them', { appendSeq: false, sessionInEventId: false }],
  ] as const;
  it.each(wires)(
    'streams the route’s reply while the run still boots; a second turn sent at once waits for the boot, answered once (%s)',
    async (_label, wire) => {
      const history = historyAgent();
      const server = await startEchoServer({ agents: [history.agent], bootDelayMs: 2_000, wire });
      const app = await startHeadStartApp(server, streamTextReply(routeModel()));
      try {
        const transport = headStartTransport(server, app);
        const chatId = uniqueChatId('head-start-cold');
        const question = userMessage('quick', 'u1');
        const stream = await transport.sendMessages({
          trigger: 'submit-message',
          chatId,
          messageId: undefined,
          messages: [question],
          abortSignal: undefined,
        });
        const reader = stream.getReader();
        const chunks: UIMessageChunk[] = [];
        while (chunks.at(-1)?.type !== 'text-delta')
          chunks.push((await reader.read()).value as UIMessageChunk);
        expect(server.inspect(chatId)?.run?.state).toBe('booting');
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          chunks.push(value);
        }
        const start = chunks.find((chunk) => chunk.type === 'start');
        const answer = {
          id: start?.type === 'start' ? (start.messageId ?? 'a1') : 'a1',
          role: 'assistant' as const,
          parts: [{ type: 'text' as const, text: textOf(chunks) }],
        };
        // Sent while the run still boots: the handover's turn-complete comes after this append.
        expect(server.inspect(chatId)?.run?.state).toBe('booting');
        const second = await transport.sendMessages({
          trigger: 'submit-message',
          chatId,
          messageId: undefined,
          messages: [question, answer, userMessage('right away', 'u2')],
          abortSignal: undefined,
        });
        const secondChunks = await readAll(second);
        expect(textOf(secondChunks)).toBe('Echo: right away');
        expect(secondChunks.filter((chunk) => chunk.type === 'start')).toHaveLength(1);
        expect(history.seen).toEqual([['user: quick', 'assistant: Route: quick', 'user: right away']]);
        transport.close();
      } finally {
        await app.close();
        await server.close();
      }
    },
  );
});
