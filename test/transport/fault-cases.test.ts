import type { UIMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevServer } from '../../src/dev-server/index.js';
import { controlRecord, dataRecord, legacyControlRecord } from '../../src/protocol/record-builders.js';
import { TurnStream } from '../../src/transport/turn-stream.js';
import { runConversation, SCRIPT } from './support/conversation.js';
import {
  createTransport,
  readAll,
  recordingFetch,
  startEchoServer,
  TestChat,
  transcript,
  uniqueChatId,
  waitFor,
} from './support/dev-server-fixture.js';

let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer();
});
afterAll(async () => {
  await server.close();
});

const nextChatId = uniqueChatId;

describe('faults the matrix cannot express', () => {
  it('malformed records mid-turn are reported and skipped; the reply is intact', async () => {
    const chatId = nextChatId('malformed');
    const baseline = await runConversation(server, nextChatId('malformed-baseline'));
    const result = await runConversation(server, chatId, {
      transport: { clientData: { delayMs: 15 } },
      beforeTurn: async (turn) => {
        if (turn !== 1) return;
        const session = server.app.context.sessions.resolve(chatId);
        session?.out.append([
          (seq, timestamp) => ({ seq_num: seq, timestamp, body: '{broken', headers: [] }),
          (seq, timestamp) => ({ seq_num: seq, timestamp, body: JSON.stringify({ data: 7 }), headers: [] }),
        ]);
      },
    });
    expect(result.errors).toEqual([]);
    expect(result.transcript).toEqual(baseline.transcript);
    expect(result.chunks).toEqual(baseline.chunks);
    const reported = result.events.filter((event) => event.type === 'error');
    expect(reported.map((event) => event.type === 'error' && [event.fatal, event.error.code])).toEqual([
      [false, 'MALFORMED_RECORD'],
      [false, 'MALFORMED_RECORD'],
    ]);
  });

  it('legacy control chunks end the turn; unknown trigger:* and control records are dropped', async () => {
    const chatId = nextChatId('legacy');
    const { transport, events } = createTransport(server);
    await transport.preload(chatId);
    const client = transport.getClient(chatId);
    const session = server.app.context.sessions.resolve(chatId);
    const from = (server.inspect(chatId)?.out.nextSeq ?? 0) - 1;
    const turn = new TurnStream({
      client,
      from: from < 0 ? undefined : from,
      mode: { type: 'replay', knownStart: true },
      peekSettled: false,
      startedAt: Date.now(),
      // One chunk per record: this test is about which records become chunks.
      coalesceDeltas: false,
    });
    turn.start();
    const legacyToken = client.getState().token ?? '';
    const data = (chunk: unknown) => (seq: number, timestamp: number) =>
      dataRecord(seq, timestamp, chunk, 'p');
    session?.out.append([
      data({ type: 'start', messageId: 'legacy-1' }),
      data({ type: 'text-start', id: 't' }),
      data({ type: 'text-delta', id: 't', delta: 'old ' }),
      data({ type: 'trigger:something-new' }),
      (seq, timestamp) => controlRecord(seq, timestamp, 'future-control'),
      (seq, timestamp) => legacyControlRecord(seq, timestamp, 'upgrade-required', 'p'),
      data({ type: 'text-delta', id: 't', delta: 'agent' }),
      data({ type: 'text-end', id: 't' }),
      data({ type: 'finish' }),
      (seq, timestamp) => legacyControlRecord(seq, timestamp, 'turn-complete', 'p', legacyToken),
      data({ type: 'start', messageId: 'never-read' }),
    ]);
    const chunks = (await readAll(turn.stream)) as { type: string }[];
    expect(chunks.map((chunk) => chunk.type)).toEqual([
      'start',
      'text-start',
      'text-delta',
      'text-delta',
      'text-end',
      'finish',
    ]);
    expect(events).toContainEqual(expect.objectContaining({ type: 'upgrade-required' }));
    expect(events).toContainEqual(expect.objectContaining({ type: 'turn-completed', rejected: false }));
    transport.close();
  });

  // A run that crashes mid-turn: see turn-integrity.test.ts (RUN_GONE, with default timeouts).

  it('when reconnects run out the AI SDK can resume: resumeStream() replays and finishes the turn', async () => {
    const chatId = nextChatId('resume-later');
    const { transport } = createTransport(server, {
      clientData: { delayMs: 40 },
      retry: { maxReconnectAttempts: 1, initialDelayMs: 5 },
    });
    const chat = new TestChat({ id: chatId, transport, onError: () => {} });
    server.faults.dropOutAfter(3);
    server.faults.sendOutError('backend down', { afterRecords: 0, connections: 3 });
    await chat.sendMessage({ text: 'a reply that gets cut off here' });
    expect(chat.status).toBe('error');
    server.faults.reset();
    await chat.resumeStream();
    expect(chat.status).toBe('ready');
    expect(transcript(chat.messages)).toEqual([
      'user: a reply that gets cut off here',
      'assistant: Echo: a reply that gets cut off here',
    ]);
    transport.close();
  });

  it('trimmed bookmark: the events report it and the next turn is still exact', async () => {
    const trimServer = await startEchoServer({ trimDelayMs: 0 });
    const chatId = nextChatId('trim');
    const baseline = await runConversation(trimServer, nextChatId('trim-baseline'), {
      script: [...SCRIPT, ...SCRIPT],
    });
    const result = await runConversation(trimServer, chatId, {
      script: [...SCRIPT, ...SCRIPT],
      beforeTurn: (turn, transport) => {
        // Rewind this page's cursor to the start: the first records are trimmed by now.
        if (turn === 3) transport.getClient(chatId).store.setState({ lastEventId: 0 });
      },
    });
    expect(result.events).toContainEqual(expect.objectContaining({ type: 'trimmed-cursor', cursor: 0 }));
    expect(result.errors).toEqual([]);
    expect(result.transcript).toEqual(baseline.transcript);
    await trimServer.close();
  });

  it('cancelling the returned stream stops every fetch', async () => {
    const recorder = recordingFetch();
    const chatId = nextChatId('cancel');
    const { transport } = createTransport(server, { fetch: recorder.fetch, clientData: { delayMs: 30 } });
    const stream = await transport.sendMessages({
      trigger: 'submit-message',
      chatId,
      messageId: undefined,
      messages: [
        {
          id: 'm1',
          role: 'user',
          parts: [{ type: 'text', text: 'long enough to cancel mid-way' }],
        } as UIMessage,
      ],
      abortSignal: undefined,
    });
    const reader = stream.getReader();
    await reader.read();
    server.faults.dropOutAfter(0, { connections: 1 });
    await reader.cancel();
    await waitFor(() => recorder.open() === 0, 2_000, 'all fetches to end');
    const before = recorder.requests.length;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(recorder.requests.length).toBe(before);
    server.faults.reset();
    transport.close();
  });
});
