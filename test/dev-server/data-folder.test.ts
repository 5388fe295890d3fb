import { existsSync, readFileSync } from 'node:fs';
import { appendFile, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type AnyAgent,
  type DevServer,
  defineAgent,
  echoAgent,
  startDevServer,
} from '../../src/dev-server/index.js';
import { COMPACT_AFTER_BYTES } from '../../src/dev-server/store/file-session-journal.js';
import { parseJournal } from '../../src/dev-server/store/journal-format.js';
import { Session } from '../../src/dev-server/store/session.js';
import { DirectorySessionStorage, JOURNAL_FILE } from '../../src/dev-server/store/session-storage.js';
import { dataRecord } from '../../src/protocol/record-builders.js';
import {
  createSession,
  readOut,
  replyText,
  sendText,
  turnCompletes,
  untilTurnCompletes,
} from './support/client.js';

const quiet = { warn: () => {} };

/** Echoes the user's text in one delta: big turns, few chunks. */
const wholeEcho = defineAgent({
  id: 'echo',
  run({ messages }) {
    const last = messages[messages.length - 1];
    const text = (last?.parts ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('');
    return (async function* () {
      yield { type: 'start' as const };
      yield { type: 'text-start' as const, id: 't' };
      yield { type: 'text-delta' as const, id: 't', delta: `Echo: ${text}` };
      yield { type: 'text-end' as const, id: 't' };
      yield { type: 'finish' as const };
    })();
  },
});
let dir: string | undefined;
const servers: DevServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  dir = undefined;
});

/** Names the history it was given, then streams 30 words 30 ms apart: a turn to cut. */
const countingSlow = defineAgent({
  id: 'echo',
  run({ messages, signal }) {
    const roles = messages.map((message) => message.role[0]).join('');
    return (async function* () {
      yield { type: 'start' as const };
      yield { type: 'text-start' as const, id: 't' };
      yield { type: 'text-delta' as const, id: 't', delta: `after ${roles}:` };
      for (let index = 0; index < 30 && !signal.aborted; index++) {
        await new Promise((resolve) => setTimeout(resolve, 30));
        yield { type: 'text-delta' as const, id: 't', delta: ` w${index}` };
      }
      yield { type: 'text-end' as const, id: 't' };
      yield { type: 'finish' as const };
    })();
  },
});

async function start(dataDir: string, options: { trimDelayMs?: number; agent?: AnyAgent } = {}) {
  const server = await startDevServer({
    dataDir,
    agents: [options.agent ?? echoAgent],
    logger: quiet,
    secretKey: 'sk_data_folder_test',
    trimDelayMs: options.trimDelayMs ?? 60_000,
  });
  servers.push(server);
  return server;
}

async function stop(server: DevServer): Promise<void> {
  servers.splice(servers.indexOf(server), 1);
  await server.close();
}

async function chatWithTurns(server: DevServer, chatId: string, texts: string[]) {
  const created = await createSession(server, { externalId: chatId });
  const token = created.body.publicAccessToken;
  for (const [index, text] of texts.entries()) {
    expect((await sendText(server, chatId, token, chatId, text)).status).toBe(200);
    await readOut(server, chatId, token, { until: untilTurnCompletes(index + 1) });
  }
  const read = await readOut(server, chatId, token, { until: untilTurnCompletes(texts.length) });
  return { id: created.body.id, token, records: read.records };
}

describe('the dev server on a data folder', () => {
  it('serves a session again after a torn last write, and appends after the whole lines', async () => {
    dir = await mkdtemp(join(tmpdir(), 'durable-chat-data-'));
    const first = await start(dir);
    const chat = await chatWithTurns(first, 'torn', ['hello']);
    await stop(first);
    const journal = join(dir, 'sessions', chat.id, JOURNAL_FILE);
    const whole = (await stat(journal)).size;
    await appendFile(journal, '{"out":[{"seq_num":99,"timestamp":1,"bo');

    const second = await start(dir);
    expect((await stat(journal)).size).toBe(whole);
    const again = await readOut(second, 'torn', chat.token, { until: untilTurnCompletes(1) });
    expect(again.records).toEqual(chat.records);
    expect((await sendText(second, 'torn', chat.token, 'torn', 'more')).status).toBe(200);
    const more = await readOut(second, 'torn', chat.token, { until: untilTurnCompletes(2) });
    await stop(second);

    const third = await start(dir);
    const all = await readOut(third, 'torn', chat.token, { until: untilTurnCompletes(2) });
    expect(all.records).toEqual(more.records);
    expect(replyText(all.records.slice(chat.records.length))).toBe('Echo: more');
  });

  it('serves a .out record, and settles an append, only once the journal holds it', async () => {
    dir = await mkdtemp(join(tmpdir(), 'durable-chat-data-'));
    const storage = new DirectorySessionStorage(dir, quiet);
    const now = new Date().toISOString();
    const session = new Session(
      {
        id: 'session_ordering',
        externalId: 'ordering',
        type: 'chat.agent',
        taskIdentifier: 'echo',
        triggerConfig: { basePayload: { chatId: 'ordering', trigger: 'preload' } },
        currentRunId: null,
        tags: [],
        metadata: null,
        closedAt: null,
        closedReason: null,
        expiresAt: null,
        createdAt: now,
        updatedAt: now,
      },
      echoAgent,
    );
    storage.keep(session);
    const journal = join(dir, 'sessions', session.row.id, JOURNAL_FILE);
    const kept = () => {
      const batches = existsSync(journal) ? parseJournal(readFileSync(journal), journal).batches : [];
      return {
        inSeqs: batches.flatMap((batch) => (batch.in ?? []).map((record) => record.seq)),
        outSeqs: batches.flatMap((batch) => (batch.out ?? []).map((record) => record.seq_num)),
      };
    };
    let woken = 0;
    session.out.subscribe(() => woken++);
    session.out.append([(seqNum, timestamp) => dataRecord(seqNum, timestamp, { type: 'start' }, 'part')]);
    // Written for the run (a new run's boot replays it), not yet for readers.
    expect(session.out.readWritten(0)).toHaveLength(1);
    expect(session.out.read(0)).toEqual([]);
    expect(session.out.tail().seq_num).toBe(0);
    expect(woken).toBe(0);
    const outKept = session.durable();
    expect(outKept).toBeDefined();
    await outKept;
    expect(kept().outSeqs).toEqual([0]);
    expect(session.out.read(0).map((record) => record.seq_num)).toEqual([0]);
    expect(session.out.tail().seq_num).toBe(1);
    expect(woken).toBe(1);

    session.in.append({ kind: 'stop' }, 'part-stop');
    const inKept = session.durable();
    expect(inKept).toBeDefined();
    expect(kept().inSeqs).toEqual([]);
    await inKept;
    expect(kept().inSeqs).toEqual([0]);
    expect(session.durable()).toBeUndefined();
    await storage.close();
  });

  it('finds a turn a graceful restart cut as a crash leaves it: no run, the next message continues with the partial reply', async () => {
    dir = await mkdtemp(join(tmpdir(), 'durable-chat-data-'));
    const server = await start(dir, { agent: countingSlow });
    const created = await createSession(server, { externalId: 'cut' });
    const token = created.body.publicAccessToken;
    await sendText(server, 'cut', token, 'cut', 'first');
    const cut = await readOut(server, 'cut', token, { until: (records) => records.length >= 6 });
    await server.restart({ keepState: false });
    // Lets fetch's pool see the sockets the restart closed (else it reuses one, and fails).
    await new Promise((resolve) => setTimeout(resolve, 100));
    const after = server.inspect('cut');
    expect(after?.run).toBeNull();
    expect(after?.row.currentRunId).toBeNull();
    const kept = await readOut(server, 'cut', token, {
      until: (records) => records.length >= cut.records.length,
    });
    expect(kept.records.slice(0, cut.records.length)).toEqual(cut.records);
    expect(turnCompletes(kept.records)).toEqual([]);
    await sendText(server, 'cut', token, 'cut', 'second');
    const next = await readOut(server, 'cut', token, { until: untilTurnCompletes(1) });
    // The continuation spliced "first" and its partial reply onto the history: u, a, then u.
    expect(replyText(next.records)).toMatch(/after uau: w0 w1/);
  });

  it('writes nothing into the folder once closed: a run ending after the close keeps no snapshot', async () => {
    dir = await mkdtemp(join(tmpdir(), 'durable-chat-data-'));
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    // Its turn ends only when the test says: after the server was closed.
    const held = defineAgent({
      id: 'echo',
      run() {
        return (async function* () {
          yield { type: 'start' as const };
          await gate;
          yield { type: 'text-start' as const, id: 't' };
          yield { type: 'text-delta' as const, id: 't', delta: 'late' };
          yield { type: 'text-end' as const, id: 't' };
          yield { type: 'finish' as const };
        })();
      },
    });
    const server = await start(dir, { agent: held });
    const created = await createSession(server, { externalId: 'late' });
    const token = created.body.publicAccessToken;
    await sendText(server, 'late', token, 'late', 'hello');
    await readOut(server, 'late', token, { until: (records) => records.length >= 1 });
    servers.splice(servers.indexOf(server), 1);
    const closed = server.close();
    release();
    await closed;
    const folder = join(dir, 'sessions', created.body.id);
    const listing = async () => (existsSync(folder) ? (await readdir(folder)).sort() : []);
    const atClose = await listing();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await listing()).toEqual(atClose);
    expect(atClose).not.toContain('snapshot.json');
  });

  it('refuses to start on a journal damaged before its last line, naming it, and starts once it is moved away', async () => {
    dir = await mkdtemp(join(tmpdir(), 'durable-chat-data-'));
    const first = await start(dir);
    const kept = await chatWithTurns(first, 'kept', ['hello']);
    const damaged = await chatWithTurns(first, 'damaged', ['hello']);
    await stop(first);
    const journal = join(dir, 'sessions', damaged.id, JOURNAL_FILE);
    const lines = (await readFile(journal, 'utf8')).split('\n');
    lines[1] = `${lines[1]?.slice(0, 10)}`;
    await writeFile(journal, lines.join('\n'));
    await expect(start(dir)).rejects.toMatchObject({ code: 'DATA_FOLDER_CORRUPT', path: journal });
    await rename(journal, `${journal}.damaged`);
    const second = await start(dir);
    expect(second.inspect('damaged')).toBeUndefined();
    const read = await readOut(second, 'kept', kept.token, { until: untilTurnCompletes(1) });
    expect(read.records).toEqual(kept.records);
  });

  it('refuses a folder another live server holds, and takes it once that one closed', async () => {
    dir = await mkdtemp(join(tmpdir(), 'durable-chat-data-'));
    const first = await start(dir);
    await expect(start(dir)).rejects.toMatchObject({ code: 'DATA_FOLDER_IN_USE', path: dir });
    await stop(first);
    await start(dir);
  });

  it('compacts a long journal into one line that restores the same logs', async () => {
    dir = await mkdtemp(join(tmpdir(), 'durable-chat-data-'));
    const first = await start(dir, { agent: wholeEcho });
    const big = 'x'.repeat(200_000);
    // Each turn keeps its message on .in and its echo on .out: past the threshold in 3 turns.
    const chat = await chatWithTurns(first, 'long', [`1${big}`, `2${big}`, `3${big}`, `4${big}`]);
    const journal = join(dir, 'sessions', chat.id, JOURNAL_FILE);
    const text = await readFile(journal, 'utf8');
    expect(text.startsWith('{"base":')).toBe(true);
    expect(text.length).toBeLessThan(COMPACT_AFTER_BYTES + 4 * 200_000);
    await stop(first);

    const second = await start(dir, { agent: wholeEcho });
    const again = await readOut(second, 'long', chat.token, { until: untilTurnCompletes(4) });
    expect(again.records).toEqual(chat.records);
    expect((await sendText(second, 'long', chat.token, 'long', 'short')).status).toBe(200);
    const next = await readOut(second, 'long', chat.token, { until: untilTurnCompletes(5) });
    expect(replyText(next.records.slice(chat.records.length))).toBe('Echo: short');
  });

  it('carries out after a restart the trim the closed server had scheduled', async () => {
    dir = await mkdtemp(join(tmpdir(), 'durable-chat-data-'));
    const first = await start(dir, { trimDelayMs: 60_000 });
    const chat = await chatWithTurns(first, 'trims', ['one', 'two']);
    const firstTurnComplete = turnCompletes(chat.records)[0]?.seqNum;
    expect(first.inspect('trims')?.out.oldestSeq).toBe(0);
    await stop(first);

    const second = await start(dir, { trimDelayMs: 0 });
    expect(second.inspect('trims')?.out.oldestSeq).toBe(firstTurnComplete);
    await stop(second);
    const third = await start(dir);
    expect(third.inspect('trims')?.out.oldestSeq).toBe(firstTurnComplete);
  });

  it('keeps nothing without a data folder (the in-process default)', async () => {
    const server = await startDevServer({ agents: [echoAgent], logger: quiet });
    servers.push(server);
    await chatWithTurns(server, 'memory', ['hi']);
    await server.restart({ keepState: false });
    expect(server.inspect('memory')).toBeUndefined();
  });
});
