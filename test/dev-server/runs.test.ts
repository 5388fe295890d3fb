import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { UIMessage, UIMessageChunk } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type AgentHookContext,
  type DevServer,
  defineAgent,
  echoAgent,
  MemoryObjectStore,
  startDevServer,
} from '../../src/dev-server/index.js';
import { readTokenClaims, runIdFromScopes } from '../../src/protocol/index.js';
import {
  chunkTypes,
  createSession,
  eventually,
  openChat,
  readNextTurn,
  readOut,
  replyText,
  sendText,
  turnCompletes,
  untilTurnCompletes,
} from './support/client.js';

const quiet = { warn() {} };
let server: DevServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

type Event = {
  hook: string;
  runId: string;
  continuation: boolean;
  previousRunId: string | undefined;
  count: number;
};

/** An agent that answers `Reply <n>: <last user text> (<message count>)` and records every hook. */
function recordingAgent(events: Event[], options: { maxTurns?: number; idleTimeoutInSeconds?: number } = {}) {
  const note = (hook: string) => (context: AgentHookContext) => {
    events.push({
      hook,
      runId: context.runId,
      continuation: context.continuation,
      previousRunId: context.previousRunId,
      count: context.messages.length,
    });
  };
  return defineAgent({
    id: 'recorder',
    ...options,
    onBoot: note('boot'),
    onPreload: note('preload'),
    onChatStart: note('chatStart'),
    onTurnStart: note('turnStart'),
    onTurnComplete: note('turnComplete'),
    onChatSuspend: note('suspend'),
    onChatResume: note('resume'),
    run({ messages, turn }) {
      const last = messages.at(-1);
      const text = last?.parts.map((part) => (part.type === 'text' ? part.text : '')).join('') ?? '';
      const chunks: UIMessageChunk[] = [
        { type: 'start' },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: `Reply ${turn}: ${text} (${messages.length})` },
        { type: 'text-end', id: 't' },
        { type: 'finish' },
      ];
      return new ReadableStream<UIMessageChunk>({
        start(controller) {
          for (const chunk of chunks) controller.enqueue(chunk);
          controller.close();
        },
      });
    },
  });
}

describe('run lifecycle', () => {
  it('goes idle, suspends after the idle timeout, and resumes on the same run with memory intact', async () => {
    const events: Event[] = [];
    server = await startDevServer({
      agents: [recordingAgent(events)],
      idleTimeoutSeconds: 0.05,
      logger: quiet,
    });
    const c = await openChat(server, 'life-suspend', 'recorder');
    await eventually(() => (server?.inspect(c.chatId)?.run?.state === 'suspended' ? true : undefined));
    await sendText(server, c.chatId, c.token, c.chatId, 'one');
    await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(1) });
    await eventually(() => (server?.inspect(c.chatId)?.run?.state === 'suspended' ? true : undefined));
    await sendText(server, c.chatId, c.token, c.chatId, 'two');
    const read = await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(2) });
    expect(replyText(read.records)).toBe('Reply 0: one (1)Reply 1: two (3)');
    expect(events.map((event) => event.hook)).toEqual([
      'boot',
      'preload',
      'suspend',
      'resume',
      'chatStart',
      'turnStart',
      'turnComplete',
      'suspend',
      'resume',
      'turnStart',
      'turnComplete',
    ]);
    expect(new Set(events.map((event) => event.runId))).toEqual(new Set([c.runId]));
  });

  it('exits after maxTurns; the next append starts a continuation run that boots from the snapshot', async () => {
    const events: Event[] = [];
    server = await startDevServer({ agents: [recordingAgent(events, { maxTurns: 1 })], logger: quiet });
    const c = await openChat(server, 'life-continue', 'recorder');
    await sendText(server, c.chatId, c.token, c.chatId, 'one');
    const first = await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(1) });
    await eventually(() => (server?.inspect(c.chatId)?.row.currentRunId === null ? true : undefined));
    await sendText(server, c.chatId, c.token, c.chatId, 'two');
    const second = await readNextTurn(server, c.chatId, c.token, first.records);
    // The new run's turn counter restarts at 0; its history holds the first exchange.
    expect(replyText(second.records)).toBe('Reply 0: two (3)');
    const boots = events.filter((event) => event.hook === 'boot');
    expect(boots).toHaveLength(2);
    expect(boots[1]).toMatchObject({ continuation: true, previousRunId: c.runId });
    // onChatStart fires once per chat, never on the continuation.
    expect(events.filter((event) => event.hook === 'chatStart')).toHaveLength(1);
    const token = turnCompletes(second.records)[0]?.publicAccessToken ?? '';
    const newRunId = runIdFromScopes(readTokenClaims(token)?.scopes);
    expect(newRunId).toBe(boots[1]?.runId);
    expect(newRunId).not.toBe(c.runId);
    const cached = await createSession(server, { externalId: 'life-continue', taskIdentifier: 'recorder' });
    expect(cached.body.runId).toBe(newRunId);
  });

  it('swaps the run on an upgrade request: upgrade-required, then the new run answers on the same stream', async () => {
    server = await startDevServer({ agents: [echoAgent], logger: quiet });
    const c = await openChat(server, 'life-upgrade', 'echo');
    await sendText(server, c.chatId, c.token, c.chatId, '/upgrade now');
    const read = await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(1) });
    const types = chunkTypes(read.records);
    expect(types[0]).toBe('control:upgrade-required');
    expect(replyText(read.records)).toBe('Echo: /upgrade now');
    expect(server.inspect(c.chatId)?.runCount).toBe(2);
    expect(server.inspect(c.chatId)?.row.currentRunId).not.toBe(c.runId);
  });

  it('upgrades mid-turn by fault: the turn is answered again by the new run', async () => {
    server = await startDevServer({ agents: [echoAgent], logger: quiet });
    const c = await openChat(server, 'life-upgrade-fault', 'echo');
    server.faults.upgradeMidTurn({ afterChunks: 4 });
    await sendText(server, c.chatId, c.token, c.chatId, 'abcdefghijklmnop');
    const read = await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(1) });
    const types = chunkTypes(read.records);
    expect(types.slice(0, 5)).toEqual([
      'start',
      'start-step',
      'text-start',
      'text-delta',
      'control:upgrade-required',
    ]);
    expect(types.slice(5, 7)).toEqual(['start', 'start-step']);
    expect(replyText(read.records)).toBe('Echo: abEcho: abcdefghijklmnop');
  });

  it('crashes mid-turn by fault: no turn-complete; the next message boots a continuation with the partial answer spliced', async () => {
    const store = new MemoryObjectStore();
    server = await startDevServer({ agents: [echoAgent], objectStore: store, logger: quiet });
    const c = await openChat(server, 'life-crash', 'echo');
    await sendText(server, c.chatId, c.token, c.chatId, 'first');
    const first = await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(1) });
    server.faults.crashMidTurn({ afterChunks: 4, sessionId: 'life-crash' });
    await sendText(server, c.chatId, c.token, c.chatId, 'doomed answer here');
    await eventually(() => (server?.inspect(c.chatId)?.run === null ? true : undefined));
    const partial = await readOut(server, c.chatId, c.token, {
      lastEventId: String(first.records.at(-1)?.seq_num),
      timeoutSeconds: 1,
      until: (records) => records.length >= 4,
    });
    expect(chunkTypes(partial.records)).toEqual(['start', 'start-step', 'text-start', 'text-delta']);
    await sendText(server, c.chatId, c.token, c.chatId, 'after');
    await readNextTurn(server, c.chatId, c.token, partial.records);
    const info = server.inspect(c.chatId);
    expect(info?.runCount).toBe(2);
    const snapshot = await store.readSnapshot(info?.row.id ?? '');
    const summary = (snapshot?.messages ?? []).map((message: UIMessage) => [
      message.role,
      message.parts.map((part) => (part.type === 'text' ? part.text : '')).join(''),
    ]);
    expect(summary).toEqual([
      ['user', 'first'],
      ['assistant', 'Echo: first'],
      ['user', 'doomed answer here'],
      ['assistant', 'Echo: do'],
      ['user', 'after'],
      ['assistant', 'Echo: after'],
    ]);
  });
});

describe('history', () => {
  it('writes the spec snapshot to a folder after every turn', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'durable-chat-dev-'));
    try {
      server = await startDevServer({ agents: [echoAgent], objectStore: { dir }, logger: quiet });
      const c = await openChat(server, 'history-dir', 'echo');
      await sendText(server, c.chatId, c.token, c.chatId, 'persist me');
      const read = await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(1) });
      const id = server.inspect(c.chatId)?.row.id ?? '';
      const path = join(dir, 'sessions', id, 'snapshot.json');
      // The snapshot is written right after the turn-complete: poll the folder for it.
      let text: string | undefined;
      for (let attempt = 0; attempt < 200 && text === undefined; attempt++) {
        text = await readFile(path, 'utf8').catch(() => undefined);
        if (text === undefined) await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const snapshot = JSON.parse(text ?? 'null');
      expect(snapshot).toMatchObject({ version: 1, lastOutEventId: read.records.at(-1)?.seq_num });
      expect(typeof snapshot.savedAt).toBe('number');
      expect(snapshot.messages.map((message: UIMessage) => message.role)).toEqual(['user', 'assistant']);
    } finally {
      await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    }
  });

  it('uses hydrateMessages as the source of truth, once per turn with 0 or 1 incoming message', async () => {
    const calls: number[] = [];
    const store: UIMessage[] = [
      { id: 'old', role: 'user', parts: [{ type: 'text', text: 'from the app db' }] },
    ];
    const agent = defineAgent({
      id: 'hydrated',
      hydrateMessages({ incomingMessages }) {
        calls.push(incomingMessages.length);
        return [...store, ...incomingMessages];
      },
      run({ messages }) {
        return (async function* (): AsyncGenerator<UIMessageChunk> {
          yield { type: 'start' };
          yield { type: 'text-start', id: 't' };
          yield { type: 'text-delta', id: 't', delta: `seen ${messages.length}` };
          yield { type: 'text-end', id: 't' };
          yield { type: 'finish' };
        })();
      },
    });
    server = await startDevServer({ agents: [agent], logger: quiet });
    const c = await openChat(server, 'history-hydrate', 'hydrated');
    await sendText(server, c.chatId, c.token, c.chatId, 'new');
    const read = await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(1) });
    expect(replyText(read.records)).toBe('seen 2');
    expect(calls).toEqual([1]);
  });

  it('keeps sessions, logs and runs across restart()', async () => {
    server = await startDevServer({ agents: [echoAgent], logger: quiet });
    const c = await openChat(server, 'history-restart', 'echo');
    await sendText(server, c.chatId, c.token, c.chatId, 'before');
    const before = await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(1) });
    const url = server.url;
    await server.restart();
    expect(server.url).toBe(url);
    // The client's pooled keep-alive socket died with the restart, as a real client's would.
    await sendText(server, c.chatId, c.token, c.chatId, 'after').catch(() =>
      sendText(server as DevServer, c.chatId, c.token, c.chatId, 'after'),
    );
    const after = await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(2) });
    expect(after.records.slice(0, before.records.length)).toEqual(before.records);
    expect(replyText(after.records)).toBe('Echo: beforeEcho: after');
    await server.restart({ keepState: false });
    const gone = await sendText(server, c.chatId, c.token, c.chatId, 'gone').catch(() =>
      sendText(server as DevServer, c.chatId, c.token, c.chatId, 'gone'),
    );
    expect(gone.status).toBe(404);
  });
});

describe('cancellation', () => {
  it('cancels a live run mid-turn: no turn-complete, and the next append boots a continuation', async () => {
    server = await startDevServer({ agents: [echoAgent], logger: quiet });
    const c = await openChat(server, 'life-cancel', 'echo');
    await sendText(server, c.chatId, c.token, c.chatId, 'slow one', { delayMs: 20, repeat: 20 });
    const partial = await readOut(server, c.chatId, c.token, {
      until: (records) => chunkTypes(records).includes('text-delta'),
    });
    expect(server.cancelRun(c.chatId)).toBe(true);
    expect(server.inspect(c.chatId)?.row.currentRunId).toBeNull();
    expect(server.cancelRun(c.chatId)).toBe(false);
    await sendText(server, c.chatId, c.token, c.chatId, 'next');
    const read = await readNextTurn(server, c.chatId, c.token, partial.records);
    expect(turnCompletes(read.records)).toHaveLength(1);
    expect(replyText(read.records).endsWith('Echo: next')).toBe(true);
    expect(server.inspect(c.chatId)?.runCount).toBe(2);
  });
});
