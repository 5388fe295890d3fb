import {
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
  readUIMessageStream,
  type UIMessage,
} from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryPersistence, type PersistedChatRecord } from '../../src/client/persistence.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { isDurableChatError } from '../../src/errors/durable-chat-error.js';
import {
  createTransport,
  readAll,
  recordingFetch,
  serverDefaults,
  startEchoServer,
  startSessionVia,
  TestChat,
  transcript,
  uniqueChatId,
  userMessage,
  waitFor,
} from './support/dev-server-fixture.js';

let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer();
});
afterAll(async () => {
  await server.close();
});

/** AI SDK 7's Chat has `dispose()` (stop, then `transport.close()`); 6 does not. */
const chatHasDispose =
  typeof (
    new TestChat({
      id: 'probe',
      transport: { sendMessages: async () => new ReadableStream(), reconnectToStream: async () => null },
    }) as unknown as { dispose?: unknown }
  ).dispose === 'function';
const nextChatId = uniqueChatId;

function appendBodies(requests: { method: string; path: string; body: string | undefined }[]) {
  return requests
    .filter((request) => request.method === 'POST' && request.path.endsWith('/in/append'))
    .map(
      (request) => JSON.parse(request.body ?? 'null') as { kind: string; payload?: Record<string, unknown> },
    );
}

describe('sendMessages', () => {
  it('appends only the last message, with clientData merged under per-call metadata', async () => {
    const recorder = recordingFetch();
    const { transport } = createTransport(server, {
      fetch: recorder.fetch,
      clientData: { userId: 'u1', repeat: 3 },
    });
    const chat = new TestChat({ id: nextChatId('meta'), transport });
    await chat.sendMessage({ text: 'one' });
    await chat.sendMessage({ text: 'two' }, { metadata: { repeat: 2 } });
    expect(transcript(chat.messages)).toEqual([
      'user: one',
      'assistant: Echo: one one one',
      'user: two',
      'assistant: Echo: two two',
    ]);
    const bodies = appendBodies(recorder.requests);
    expect(bodies).toHaveLength(2);
    expect(bodies[1]?.payload?.metadata).toEqual({ userId: 'u1', repeat: 2 });
    expect((bodies[1]?.payload?.message as UIMessage | undefined)?.parts).toEqual([
      { type: 'text', text: 'two' },
    ]);
    expect(bodies[1]?.payload).not.toHaveProperty('messages');
    transport.close();
  });

  it('forwards per-request headers and body fields, but body never overwrites chatId, trigger or message', async () => {
    const recorder = recordingFetch();
    const { transport } = createTransport(server, { fetch: recorder.fetch });
    const chatId = nextChatId('body');
    const chat = new TestChat({ id: chatId, transport });
    await chat.sendMessage(
      { text: 'safe' },
      {
        headers: { 'x-trace': 'abc' },
        body: {
          chatId: 'evil',
          trigger: 'action',
          message: { id: 'x', role: 'user', parts: [] },
          idleTimeoutInSeconds: 5,
        },
      },
    );
    expect(transcript(chat.messages)).toEqual(['user: safe', 'assistant: Echo: safe']);
    const append = recorder.requests.find((request) => request.path.endsWith('/in/append'));
    expect(append?.headers.get('x-trace')).toBe('abc');
    const [body] = appendBodies(recorder.requests);
    expect(body?.payload).toMatchObject({ chatId, trigger: 'submit-message', idleTimeoutInSeconds: 5 });
    expect((body?.payload?.message as UIMessage | undefined)?.id).not.toBe('x');
    transport.close();
  });

  it('regenerates: appends with no message and replaces the last reply', async () => {
    const recorder = recordingFetch();
    const { transport } = createTransport(server, { fetch: recorder.fetch });
    const chat = new TestChat({ id: nextChatId('regen'), transport });
    await chat.sendMessage({ text: 'again' });
    await chat.regenerate();
    expect(transcript(chat.messages)).toEqual(['user: again', 'assistant: Echo: again']);
    const bodies = appendBodies(recorder.requests);
    expect(bodies[1]?.payload?.trigger).toBe('regenerate-message');
    expect(bodies[1]?.payload).not.toHaveProperty('message');
    transport.close();
  });

  it('reports a turn-complete with no content after a submit as TURN_REJECTED', async () => {
    const { transport, events } = createTransport(server);
    const errors: Error[] = [];
    const chat = new TestChat({
      id: nextChatId('reject'),
      transport,
      onError: (error) => errors.push(error),
    });
    await chat.sendMessage({ text: 'bad metadata' }, { metadata: { userId: 42 } });
    expect(chat.status).toBe('error');
    expect(errors[0]).toMatchObject({ code: 'TURN_REJECTED' });
    expect(events).toContainEqual(expect.objectContaining({ type: 'turn-completed', rejected: true }));
    // The chat goes on: the next valid send works.
    await chat.sendMessage({ text: 'fine' });
    expect(transcript(chat.messages).slice(-1)).toEqual(['assistant: Echo: fine']);
    transport.close();
  });

  it('sends a tool approval as the slim assistant message under the agent message id', async () => {
    const recorder = recordingFetch();
    const { transport } = createTransport(server, { fetch: recorder.fetch });
    const chat = new TestChat({
      id: nextChatId('approve'),
      transport,
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });
    await chat.sendMessage({ text: '/approve ship it' });
    const assistant = chat.messages[1];
    const part = assistant?.parts.find((candidate) => candidate.type === 'tool-confirm') as
      | { state: string; approval?: { id: string } }
      | undefined;
    expect(part?.state).toBe('approval-requested');
    await chat.addToolApprovalResponse({ id: part?.approval?.id ?? '', approved: true });
    await waitFor(
      () => chat.status === 'ready' && transcript(chat.messages).some((line) => line.includes('Confirmed')),
    );
    expect(transcript(chat.messages)).toEqual([
      'user: /approve ship it',
      'assistant: [tool-confirm]Confirmed: ship it',
    ]);
    const bodies = appendBodies(recorder.requests);
    const approval = bodies[1]?.payload?.message as UIMessage;
    expect(approval.id).toBe(assistant?.id);
    expect(approval.role).toBe('assistant');
    expect(approval.parts).toHaveLength(1);
    expect(approval.parts[0]).toMatchObject({ type: 'tool-confirm', state: 'approval-responded' });
    transport.close();
  });

  it('sends a user-supplied tool output and streams the continuation', async () => {
    const { transport } = createTransport(server);
    const chat = new TestChat({
      id: nextChatId('ask'),
      transport,
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
    });
    await chat.sendMessage({ text: '/ask favourite colour?' });
    const part = chat.messages[1]?.parts.find((candidate) => candidate.type === 'tool-askUser') as
      | { toolCallId: string; state: string }
      | undefined;
    expect(part?.state).toBe('input-available');
    await chat.addToolOutput({
      tool: 'askUser' as never,
      toolCallId: part?.toolCallId ?? '',
      output: 'blue' as never,
    });
    await waitFor(
      () => chat.status === 'ready' && transcript(chat.messages).some((line) => line.includes('answered')),
    );
    expect(transcript(chat.messages)[1]).toBe('assistant: [tool-askUser]You answered: blue');
    transport.close();
  });

  it('refuses an oversized message locally with PAYLOAD_TOO_LARGE (nothing sent)', async () => {
    const recorder = recordingFetch();
    const { transport } = createTransport(server, { fetch: recorder.fetch });
    const errors: Error[] = [];
    const chat = new TestChat({ id: nextChatId('big'), transport, onError: (error) => errors.push(error) });
    await chat.sendMessage({ text: '"'.repeat(600_000) });
    expect(errors[0]).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect(recorder.requests).toHaveLength(0);
    transport.close();
  });
});

describe('stop', () => {
  it('ends the stream at once, appends stop only for a live turn, and the next turn is clean', async () => {
    const recorder = recordingFetch();
    const { transport } = createTransport(server, { fetch: recorder.fetch, clientData: { delayMs: 40 } });
    const chat = new TestChat({ id: nextChatId('stop'), transport });
    const sending = chat.sendMessage({ text: 'a fairly long message that streams slowly' });
    await waitFor(() => chat.status === 'streaming');
    await chat.stop();
    await sending;
    expect(chat.status).toBe('ready');
    await waitFor(() => appendBodies(recorder.requests).some((body) => body.kind === 'stop'));
    const partial = transcript(chat.messages)[1] ?? '';
    expect(partial.length).toBeLessThan('assistant: Echo: a fairly long message that streams slowly'.length);
    await chat.sendMessage({ text: 'next' }, { metadata: { delayMs: 0 } });
    expect(transcript(chat.messages).slice(2)).toEqual(['user: next', 'assistant: Echo: next']);
    // A stop when nothing is live sends nothing.
    await chat.stop();
    await transport.stop(chat.id);
    expect(appendBodies(recorder.requests).filter((body) => body.kind === 'stop')).toHaveLength(1);
    transport.close();
  });

  it('an unmount (abort, then disconnect in the same tick) does not stop the agent', async () => {
    const recorder = recordingFetch();
    const { transport } = createTransport(server, { fetch: recorder.fetch, clientData: { delayMs: 30 } });
    const chat = new TestChat({ id: nextChatId('unmount'), transport });
    const sending = chat.sendMessage({ text: 'keep running after I leave the page' });
    await waitFor(() => chat.status === 'streaming');
    // What @ai-sdk/react's cleanup does (chat.stop()), then the durable hook's cleanup.
    const stopping = chat.stop();
    transport.disconnect(chat.id);
    await stopping;
    await sending;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(appendBodies(recorder.requests).filter((body) => body.kind === 'stop')).toHaveLength(0);
    // The agent finished the turn: a later resume shows all of it.
    await waitFor(
      () => (server.inspect(chat.id)?.in.acknowledgedSeq ?? -1) >= 0,
      3_000,
      'the turn to finish',
    );
    expect(transport.getState(chat.id).turnLive).toBe(true);
    await chat.resumeStream();
    expect(transcript(chat.messages).at(-1)).toBe('assistant: Echo: keep running after I leave the page');
    transport.close();
  });

  it.runIf(chatHasDispose)(
    'AI SDK 7 Chat.dispose() (stop, then transport.close) is a disconnect, not a stop',
    async () => {
      const recorder = recordingFetch();
      const { transport } = createTransport(server, { fetch: recorder.fetch, clientData: { delayMs: 30 } });
      const chat = new TestChat({ id: nextChatId('dispose'), transport });
      const dispose = (chat as unknown as { dispose: () => Promise<void> }).dispose;
      const sending = chat.sendMessage({ text: 'dispose me while streaming please' });
      await waitFor(() => chat.status === 'streaming');
      await dispose.call(chat);
      await sending;
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(appendBodies(recorder.requests).filter((body) => body.kind === 'stop')).toHaveLength(0);
      await waitFor(() => recorder.open() === 0, 2_000, 'every fetch to end');
    },
  );

  it('aborting a resumed stream only disconnects; stop(chatId) stops a resumed turn', async () => {
    const recorder = recordingFetch();
    const { transport } = createTransport(server, { fetch: recorder.fetch, clientData: { delayMs: 40 } });
    const chat = new TestChat({ id: nextChatId('resume-stop'), transport });
    void chat.sendMessage({ text: 'a turn that will be resumed and then stopped' });
    await waitFor(() => chat.status === 'streaming');
    const resumed = new TestChat({ id: chat.id, transport, messages: chat.messages.slice(0, 1) });
    const resuming = resumed.resumeStream();
    await waitFor(() => resumed.status === 'streaming');
    await resumed.stop(); // aborts the resume request: a disconnect
    await resuming;
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(appendBodies(recorder.requests).filter((body) => body.kind === 'stop')).toHaveLength(0);
    await transport.stop(chat.id);
    expect(appendBodies(recorder.requests).filter((body) => body.kind === 'stop')).toHaveLength(1);
    transport.close();
  });

  it('a mere disconnect (stream cancelled) does not stop the agent unless configured', async () => {
    for (const stopOnDisconnect of [false, true]) {
      const recorder = recordingFetch();
      const { transport } = createTransport(server, {
        fetch: recorder.fetch,
        clientData: { delayMs: 30 },
        stopOnDisconnect,
      });
      const chatId = nextChatId('disconnect');
      const stream = await transport.sendMessages({
        trigger: 'submit-message',
        chatId,
        messageId: undefined,
        messages: [userMessage('cancel me please, it is long')],
        abortSignal: undefined,
      });
      const reader = stream.getReader();
      await reader.read();
      await reader.cancel();
      await waitFor(() => recorder.open() === 0, 2_000, 'every fetch to end');
      await new Promise((resolve) => setTimeout(resolve, 50));
      const stops = appendBodies(recorder.requests).filter((body) => body.kind === 'stop');
      expect(stops).toHaveLength(stopOnDisconnect ? 1 : 0);
      transport.close();
    }
  });
});

describe('reconnectToStream', () => {
  it('resolves null when nothing is live, sending X-Peek-Settled only on this path', async () => {
    const recorder = recordingFetch();
    const { transport } = createTransport(server, { fetch: recorder.fetch });
    const chat = new TestChat({ id: nextChatId('peek'), transport });
    expect(await transport.reconnectToStream({ chatId: chat.id })).toBeNull(); // no session yet: no request
    expect(recorder.requests).toHaveLength(0);
    await chat.sendMessage({ text: 'done already' });
    expect(await transport.reconnectToStream({ chatId: chat.id })).toBeNull();
    const outs = recorder.requests.filter((request) => request.path.endsWith('/out'));
    expect(outs.map((request) => request.headers.get('x-peek-settled'))).toEqual([null, '1']);
    transport.close();
  });

  it('after a reload mid-turn, replays the live turn from its start (resumeStreamIsReplay)', async () => {
    const records = new Map<string, PersistedChatRecord>();
    const chatId = nextChatId('reload');
    const first = createTransport(server, {
      persistence: memoryPersistence(records),
      clientData: { delayMs: 25 },
    });
    expect(first.transport.resumeStreamIsReplay).toBe(true);
    const chat = new TestChat({ id: chatId, transport: first.transport });
    void chat.sendMessage({ text: 'survive the reload of this page' });
    await waitFor(() => (transcript(chat.messages)[1] ?? '').length > 'assistant: Echo: '.length);
    await first.transport.getClient(chatId).flushPersistence();
    first.transport.close(); // the page goes away; the agent keeps going
    const userOnly = chat.messages.slice(0, 1);

    const second = createTransport(server, { persistence: memoryPersistence(records) });
    const resumed = new TestChat({
      id: chatId,
      transport: second.transport,
      messages: structuredClone(userOnly),
    });
    await resumed.resumeStream();
    expect(transcript(resumed.messages)).toEqual([
      'user: survive the reload of this page',
      'assistant: Echo: survive the reload of this page',
    ]);
    expect(second.transport.getState(chatId).turnLive).toBe(false);
    second.transport.close();
  });

  it('without a known turn start, replays only the live turn (earlier turns are skipped)', async () => {
    const chatId = nextChatId('nostart');
    const first = createTransport(server);
    const chat = new TestChat({ id: chatId, transport: first.transport });
    await chat.sendMessage({ text: 'earlier turn' });
    void chat.sendMessage(
      { text: 'live turn here, long enough to outlast the reload' },
      { metadata: { delayMs: 60 } },
    );
    await waitFor(() => chat.status === 'streaming');
    first.transport.close();

    // A fresh page that only knows the session (no cursor, no turn start).
    const second = createTransport(server);
    const client = second.transport.getClient(chatId);
    await client.preload();
    const stream = await second.transport.reconnectToStream({ chatId });
    expect(stream).not.toBeNull();
    const texts: string[] = [];
    for await (const message of readUIMessageStream({ stream: stream as ReadableStream })) {
      texts.splice(0, texts.length, ...transcript([message]));
    }
    expect(texts).toEqual(['assistant: Echo: live turn here, long enough to outlast the reload']);
    second.transport.close();
  });

  it('two overlapping resumeStream() calls of the AI SDK Chat: one reader, one complete reply, no stop', async () => {
    const recorder = recordingFetch();
    const chatId = nextChatId('strict-chat');
    const { transport } = createTransport(server, { fetch: recorder.fetch, clientData: { delayMs: 30 } });
    const sender = new TestChat({ id: chatId, transport });
    void sender.sendMessage({ text: 'resumed twice by a double mount' });
    await waitFor(() => sender.status === 'streaming');
    const chat = new TestChat({ id: chatId, transport, messages: sender.messages.slice(0, 1) });
    const first = chat.resumeStream();
    const second = chat.resumeStream();
    await waitFor(() => recorder.open() === 1, 2_000, 'a single open .out connection');
    await Promise.all([first, second]);
    expect(transcript(chat.messages)).toEqual([
      'user: resumed twice by a double mount',
      'assistant: Echo: resumed twice by a double mount',
    ]);
    expect(appendBodies(recorder.requests).filter((body) => body.kind === 'stop')).toHaveLength(0);
    transport.close();
  });

  it('two overlapping reconnects (StrictMode) leave one live reader', async () => {
    const recorder = recordingFetch();
    const chatId = nextChatId('strict');
    const { transport } = createTransport(server, { fetch: recorder.fetch, clientData: { delayMs: 30 } });
    const chat = new TestChat({ id: chatId, transport });
    void chat.sendMessage({ text: 'strict mode mounts twice' });
    await waitFor(() => chat.status === 'streaming');
    const [a, b] = await Promise.all([
      transport.reconnectToStream({ chatId }),
      transport.reconnectToStream({ chatId }),
    ]);
    expect(a).toBeNull();
    expect(b).not.toBeNull();
    await waitFor(() => recorder.open() === 1, 2_000, 'a single open .out connection');
    const chunks = await readAll(b as ReadableStream);
    expect(chunks.at(0)).toMatchObject({ type: 'start' });
    expect(chunks.at(-1)).toMatchObject({ type: 'finish' });
    transport.close();
  });
});

describe('other transport methods', () => {
  it('preload starts the session once, however many callers', async () => {
    const counter = { calls: 0 };
    const { transport } = createTransport(server, { startSession: startSessionVia(server, counter) });
    const chatId = nextChatId('preload');
    await Promise.all([
      transport.preload(chatId),
      transport.preload(chatId),
      transport.getClient(chatId).ensureSession(),
    ]);
    expect(counter.calls).toBe(1);
    expect(transport.getState(chatId).sessionId).toMatch(/^session_/);
    const chat = new TestChat({ id: chatId, transport });
    await chat.sendMessage({ text: 'warm' });
    expect(counter.calls).toBe(1);
    transport.close();
  });

  it('sendAction fires the action; resumeStream shows its output', async () => {
    const { transport } = createTransport(server);
    const chat = new TestChat({ id: nextChatId('action'), transport });
    await chat.sendMessage({ text: 'hi' });
    const result = await transport.sendAction(chat.id, { type: 'shout' });
    // `seq` is optional on the wire (flows-without-seq.test.ts runs this against a server without it).
    expect(result.seq).toBe(serverDefaults.wire?.appendSeq === false ? undefined : 1);
    await chat.resumeStream();
    expect(transcript(chat.messages).at(-1)).toBe('assistant: SHOUT');
    transport.close();
  });

  it('sendPendingMessage leaves the open stream alone', async () => {
    const recorder = recordingFetch();
    const { transport } = createTransport(server, { fetch: recorder.fetch, clientData: { delayMs: 20 } });
    const chat = new TestChat({ id: nextChatId('steer'), transport });
    const sending = chat.sendMessage({ text: 'steer me while I talk' });
    await waitFor(() => chat.status === 'streaming');
    const outsBefore = recorder.requests.filter((request) => request.path.endsWith('/out')).length;
    await transport.sendPendingMessage(chat.id, userMessage('also this'));
    await sending;
    expect(transcript(chat.messages)).toEqual([
      'user: steer me while I talk',
      'assistant: Echo: steer me while I talk',
    ]);
    expect(recorder.requests.filter((request) => request.path.endsWith('/out')).length).toBe(outsBefore);
    transport.close();
  });

  it('getState exposes the store; close() releases every reader', async () => {
    const recorder = recordingFetch();
    const { transport } = createTransport(server, { fetch: recorder.fetch, clientData: { delayMs: 50 } });
    const chat = new TestChat({ id: nextChatId('close'), transport });
    void chat.sendMessage({ text: 'long enough to be open' });
    await waitFor(() => chat.status === 'streaming');
    expect(transport.getState(chat.id)).toMatchObject({ turnLive: true, status: { type: 'streaming' } });
    transport.close();
    await waitFor(() => recorder.open() === 0, 2_000, 'every fetch to end');
  });
});

describe('closed session', () => {
  it('a 409 seen while a turn streams stops the read: the stream errors with SESSION_CLOSED', async () => {
    const { transport } = createTransport(server, { clientData: { delayMs: 40 } });
    const errors: unknown[] = [];
    const chat = new TestChat({
      id: nextChatId('closed-live'),
      transport,
      onError: (error) => errors.push(error),
    });
    const sending = chat.sendMessage({ text: 'closed while I am still talking' });
    await waitFor(() => chat.status === 'streaming');
    const sessionId = transport.getState(chat.id).sessionId ?? '';
    await fetch(`${server.url}/api/v1/sessions/${sessionId}/close`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.secretKey}` },
    });
    await expect(transport.sendPendingMessage(chat.id, userMessage('hello?'))).rejects.toMatchObject({
      code: 'SESSION_CLOSED',
    });
    await sending;
    expect(chat.status).toBe('error');
    expect(errors[0]).toMatchObject({ code: 'SESSION_CLOSED' });
    expect(transport.getState(chat.id).status).toEqual({ type: 'closed' });
    transport.close();
  });

  it('409 marks the chat closed: the send fails with SESSION_CLOSED and later sends are refused locally', async () => {
    const recorder = recordingFetch();
    const { transport, events } = createTransport(server, { fetch: recorder.fetch });
    const errors: unknown[] = [];
    const chat = new TestChat({
      id: nextChatId('closed'),
      transport,
      onError: (error) => errors.push(error),
    });
    await chat.sendMessage({ text: 'before close' });
    const sessionId = transport.getState(chat.id).sessionId ?? '';
    const closed = await fetch(`${server.url}/api/v1/sessions/${sessionId}/close`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.secretKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'done here' }),
    });
    expect(closed.ok).toBe(true);
    await chat.sendMessage({ text: 'after close' });
    expect(errors[0]).toMatchObject({ code: 'SESSION_CLOSED' });
    expect(transport.getState(chat.id)).toMatchObject({ closed: true, status: { type: 'closed' } });
    expect(events).toContainEqual(expect.objectContaining({ type: 'session-closed' }));
    const requestsBefore = recorder.requests.length;
    await chat.sendMessage({ text: 'refused locally' });
    expect(isDurableChatError(errors[1]) && errors[1].code).toBe('SESSION_CLOSED');
    expect(recorder.requests.length).toBe(requestsBefore);
    expect(await transport.reconnectToStream({ chatId: chat.id })).toBeNull();
    transport.close();
  });
});
