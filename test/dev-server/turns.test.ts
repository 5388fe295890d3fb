import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DevServer, echoAgent, startDevServer } from '../../src/dev-server/index.js';
import { readTokenClaims } from '../../src/protocol/index.js';
import {
  answerTool,
  append,
  chunkTypes,
  classify,
  createSession,
  dataChunks,
  openChat,
  readNextTurn,
  readOut,
  replyText,
  sendText,
  turnCompletes,
  untilTurnCompletes,
  userMessage,
} from './support/client.js';

let server: DevServer;

beforeAll(async () => {
  server = await startDevServer({ agents: [echoAgent], trimDelayMs: 60_000, logger: { warn() {} } });
});
afterAll(() => server.close());

describe('echo turns', () => {
  it('streams the standard chunk sequence in 8-character deltas, then turn-complete', async () => {
    const c = await openChat(server, 'turn-basic');
    const sent = await sendText(server, c.chatId, c.token, c.chatId, 'hello there world');
    expect(await sent.json()).toEqual({ ok: true, seq: 0 });
    const read = await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(1) });
    expect(chunkTypes(read.records)).toEqual([
      'start',
      'start-step',
      'text-start',
      'text-delta',
      'text-delta',
      'text-delta',
      'text-end',
      'finish-step',
      'finish',
      'control:turn-complete',
      // "After each turn-complete": the first one too, trimming back to the oldest record (nothing).
      'command:trim',
    ]);
    expect(read.records.at(-1)?.body).toBe('0');
    expect(replyText(read.records)).toBe('Echo: hello there world');
    const deltas = classify(read.records).flatMap((r) =>
      r.kind === 'data' && r.chunk.type === 'text-delta' ? [r.chunk.delta] : [],
    );
    expect(deltas).toEqual(['Echo: he', 'llo ther', 'e world']);
    const start = classify(read.records)[0];
    expect(start?.kind === 'data' && start.chunk.type === 'start' && typeof start.chunk.messageId).toBe(
      'string',
    );
    expect(read.records.map((r) => r.seq_num)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const [complete] = turnCompletes(read.records);
    expect(complete?.sessionInEventId).toBe(0);
    const claims = readTokenClaims(complete?.publicAccessToken ?? '');
    expect(claims?.scopes).toContain(`read:runs:${c.runId}`);
    expect(claims?.scopes).toContain(`write:sessions:${c.chatId}`);
  });

  it('answers a submit-message basePayload as the first turn, and a preload writes nothing', async () => {
    const preloaded = await openChat(server, 'turn-preload');
    const created = await createSession(server, {
      externalId: 'turn-first',
      trigger: 'submit-message',
      message: userMessage('first'),
    });
    const read = await readOut(server, 'turn-first', created.body.publicAccessToken, {
      until: untilTurnCompletes(1),
    });
    expect(replyText(read.records)).toBe('Echo: first');
    // No .in record was answered: the turn-complete carries no .in cursor.
    expect(turnCompletes(read.records)[0]?.sessionInEventId).toBeUndefined();
    expect(server.inspect(preloaded.id)?.out.nextSeq).toBe(0);
  });

  it('repeats and paces by metadata, and rejects bad metadata with an empty turn and no token', async () => {
    const c = await openChat(server, 'turn-meta');
    await sendText(server, c.chatId, c.token, c.chatId, 'ab', { repeat: 3 });
    await sendText(server, c.chatId, c.token, c.chatId, 'bad', { userId: 42 });
    const read = await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(2) });
    expect(replyText(read.records)).toBe('Echo: ab ab ab');
    const types = chunkTypes(read.records);
    const firstComplete = types.indexOf('control:turn-complete');
    // The rejected turn: a turn-complete with no content chunk before it (after the trim of turn 1).
    expect(types.slice(firstComplete + 1)).toEqual(['command:trim', 'control:turn-complete', 'command:trim']);
    const rejected = turnCompletes(read.records)[1];
    expect(rejected?.publicAccessToken).toBeUndefined();
    expect(rejected?.sessionInEventId).toBe(1);
  });

  it('stops a long turn: the stream is cut short and a turn-complete follows', async () => {
    const c = await openChat(server, 'turn-stop');
    await sendText(server, c.chatId, c.token, c.chatId, 'long answer', { delayMs: 20, repeat: 50 });
    const partial = await readOut(server, c.chatId, c.token, {
      until: (records) => chunkTypes(records).filter((type) => type === 'text-delta').length >= 2,
    });
    expect(partial.ended).toBe('until');
    const stopped = await append(server, c.chatId, c.token, { kind: 'stop', message: 'user pressed stop' });
    expect(stopped.status).toBe(200);
    const read = await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(1) });
    const full = `Echo: ${Array.from({ length: 50 }, () => 'long answer').join(' ')}`;
    expect(replyText(read.records).length).toBeLessThan(full.length);
    expect(full.startsWith(replyText(read.records))).toBe(true);
    expect(chunkTypes(read.records).slice(-2)).toEqual(['control:turn-complete', 'command:trim']);
    expect(server.inspect(c.chatId)?.run?.state).toBe('idle');
  });

  it('answers the shout action, and rejects an unknown action with an empty turn', async () => {
    const c = await openChat(server, 'turn-action');
    await append(server, c.chatId, c.token, {
      kind: 'message',
      payload: { chatId: c.chatId, trigger: 'action', action: { type: 'shout' } },
    });
    await append(server, c.chatId, c.token, {
      kind: 'message',
      payload: { chatId: c.chatId, trigger: 'action', action: { type: 'whisper' } },
    });
    const read = await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(2) });
    expect(replyText(read.records)).toBe('SHOUT');
    const types = chunkTypes(read.records);
    expect(types.slice(types.indexOf('control:turn-complete') + 1)).toEqual([
      'command:trim',
      'control:turn-complete',
      'command:trim',
    ]);
  });

  it('runs the approval round trip on the same assistant message id', async () => {
    const c = await openChat(server, 'turn-approve');
    await sendText(server, c.chatId, c.token, c.chatId, '/approve send the report');
    const first = await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(1) });
    const chunks = dataChunks(first.records);
    const start = chunks.find((chunk) => chunk.type === 'start');
    const request = chunks.find((chunk) => chunk.type === 'tool-approval-request');
    const input = chunks.find((chunk) => chunk.type === 'tool-input-available');
    expect(input).toMatchObject({ toolName: 'confirm', input: { text: 'send the report' } });
    if (
      start?.type !== 'start' ||
      request?.type !== 'tool-approval-request' ||
      start.messageId === undefined
    ) {
      throw new Error('expected a start with messageId and an approval request');
    }
    await answerTool(server, c.chatId, c.token, start.messageId, {
      type: 'tool-confirm',
      toolCallId: request.toolCallId,
      state: 'approval-responded',
      input: { text: 'send the report' },
      approval: { id: request.approvalId, approved: true },
    });
    const second = await readNextTurn(server, c.chatId, c.token, first.records);
    const next = dataChunks(second.records);
    expect(next[0]).toEqual({ type: 'start', messageId: start.messageId });
    expect(next).toContainEqual({
      type: 'tool-output-available',
      toolCallId: request.toolCallId,
      output: { confirmed: true, text: 'send the report' },
    });
    expect(replyText(second.records)).toBe('Confirmed: send the report');
  });

  it('takes a user-supplied tool output for /ask', async () => {
    const c = await openChat(server, 'turn-ask');
    await sendText(server, c.chatId, c.token, c.chatId, '/ask favourite colour?');
    const first = await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(1) });
    const chunks = dataChunks(first.records);
    expect(chunks.find((chunk) => chunk.type === 'tool-input-available')).toMatchObject({
      toolName: 'askUser',
      input: { question: 'favourite colour?' },
    });
    const start = chunks.find((chunk) => chunk.type === 'start');
    const call = chunks.find((chunk) => chunk.type === 'tool-input-available');
    if (start?.type !== 'start' || call?.type !== 'tool-input-available') throw new Error('no tool call');
    await answerTool(server, c.chatId, c.token, start.messageId ?? '', {
      type: 'tool-askUser',
      toolCallId: call.toolCallId,
      state: 'output-available',
      input: call.input,
      output: 'green',
    });
    const second = await readNextTurn(server, c.chatId, c.token, first.records);
    expect(replyText(second.records)).toBe('You answered: green');
  });

  it('queues a message sent while streaming and answers it as the next turn', async () => {
    const c = await openChat(server, 'turn-queue');
    await sendText(server, c.chatId, c.token, c.chatId, 'one', { delayMs: 10, repeat: 4 });
    await sendText(server, c.chatId, c.token, c.chatId, 'two');
    const read = await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(2) });
    const completes = turnCompletes(read.records);
    expect(completes.map((complete) => complete.sessionInEventId)).toEqual([0, 1]);
    expect(replyText(read.records)).toBe('Echo: one one one oneEcho: two');
  });

  it('regenerates from the last user message', async () => {
    const c = await openChat(server, 'turn-regen');
    await sendText(server, c.chatId, c.token, c.chatId, 'again');
    await append(server, c.chatId, c.token, {
      kind: 'message',
      payload: { chatId: c.chatId, trigger: 'regenerate-message' },
    });
    const read = await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(2) });
    expect(replyText(read.records)).toBe('Echo: againEcho: again');
  });

  it('reports an agent failure as an error chunk and a turn-complete without a token', async () => {
    const c = await openChat(server, 'turn-error');
    await sendText(server, c.chatId, c.token, c.chatId, '/error please');
    const read = await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(1) });
    const chunks = dataChunks(read.records);
    expect(chunks.at(-1)).toEqual({ type: 'error', errorText: 'echo agent: failure requested by /error' });
    expect(turnCompletes(read.records)[0]?.publicAccessToken).toBeUndefined();
  });
});

describe('stop targeting', () => {
  it('a stop aborts the live turn only, not the message queued behind it', async () => {
    const created = await createSession(server, {
      externalId: 'stop-target',
      trigger: 'submit-message',
      message: userMessage('first', 'u-first'),
      metadata: { delayMs: 20, repeat: 30 },
    });
    const token = created.body.publicAccessToken;
    await readOut(server, 'stop-target', token, {
      until: (records) => chunkTypes(records).includes('text-delta'),
    });
    // Its own metadata: without it the basePayload's (slow, repeated) client data applies.
    await sendText(server, 'stop-target', token, 'stop-target', 'queued', {});
    await append(server, 'stop-target', token, { kind: 'stop' });
    const read = await readOut(server, 'stop-target', token, { until: untilTurnCompletes(2) });
    const texts = replyText(read.records);
    expect(texts.endsWith('Echo: queued')).toBe(true);
    expect(texts.length).toBeLessThan(`Echo: ${'first '.repeat(30)}Echo: queued`.length);
  });
});
