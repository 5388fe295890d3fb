import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { UIMessage } from 'ai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type AgentDefinition,
  type DevServer,
  echoAgent,
  startDevServer,
} from '../../src/dev-server/index.js';
import { classifyRecord } from '../../src/protocol/records.js';
import { runCli, startCli, stopCli } from './support/cli.js';
import { append, createSession, readOut, replyText, sendText, untilTurnCompletes } from './support/client.js';

const seen: number[] = [];
const countingEcho: AgentDefinition = {
  ...(echoAgent as AgentDefinition),
  run(context) {
    seen.push(context.messages.length);
    return echoAgent.run(context as Parameters<typeof echoAgent.run>[0]);
  },
};

const text = (id: string, role: 'user' | 'assistant', value: string): UIMessage => ({
  id,
  role,
  parts: [{ type: 'text', text: value }],
});

describe('handover-prepare whose history ends with the route’s answer', () => {
  let server: DevServer;
  beforeAll(async () => {
    server = await startDevServer({ port: 0, agents: [countingEcho], logger: { warn() {} } });
  });
  afterAll(() => server.close());

  it('is taken as the first turn without answering it again: a turn-complete, no content; the next turn has the history', async () => {
    seen.length = 0;
    const created = await createSession(server, { externalId: 'answered-handover' });
    const token = created.body.publicAccessToken;
    const history = [text('u1', 'user', 'first question'), text('a1', 'assistant', 'the route answered')];
    await append(server, 'answered-handover', token, {
      kind: 'message',
      payload: { chatId: 'answered-handover', trigger: 'handover-prepare', headStartMessages: history },
    });
    const first = await readOut(server, 'answered-handover', token, { until: untilTurnCompletes(1) });
    const kinds = first.records.map((record) => classifyRecord(record).kind);
    expect(kinds.filter((kind) => kind === 'data')).toEqual([]);
    expect(kinds).toContain('control');
    expect(seen).toEqual([]);
    await sendText(server, 'answered-handover', token, 'answered-handover', 'second question');
    const second = await readOut(server, 'answered-handover', token, {
      lastEventId: String(first.records.at(-1)?.seq_num),
      until: untilTurnCompletes(1),
    });
    expect(replyText(second.records)).toBe('Echo: second question');
    expect(seen).toEqual([3]);
  });
});

describe('bootDelayMs: a simulated cold start', () => {
  it('holds every new run in `booting` for the delay before it answers', async () => {
    const server = await startDevServer({
      port: 0,
      agents: [echoAgent],
      bootDelayMs: 600,
      logger: { warn() {} },
    });
    try {
      const started = Date.now();
      const created = await createSession(server, { externalId: 'cold' });
      const token = created.body.publicAccessToken;
      await sendText(server, 'cold', token, 'cold', 'are you up');
      expect(server.inspect('cold')?.run?.state).toBe('booting');
      const read = await readOut(server, 'cold', token, { until: untilTurnCompletes(1) });
      expect(replyText(read.records)).toBe('Echo: are you up');
      expect(Date.now() - started).toBeGreaterThanOrEqual(600);
    } finally {
      await server.close();
    }
  });

  it('ends the wait when the run is cancelled during its cold start', async () => {
    const server = await startDevServer({
      port: 0,
      agents: [echoAgent],
      bootDelayMs: 60_000,
      logger: { warn() {} },
    });
    try {
      await createSession(server, { externalId: 'cancelled-cold' });
      expect(server.inspect('cancelled-cold')?.run?.state).toBe('booting');
      const cancel = await fetch(`${server.url}/__dev/sessions/cancelled-cold/cancel-run`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.secretKey}` },
      });
      expect(await cancel.json()).toMatchObject({ cancelled: true });
      expect(server.inspect('cancelled-cold')?.run).toBeNull();
    } finally {
      await server.close();
    }
  });
});

describe('durable-chat dev --boot-delay', () => {
  let child: ChildProcess | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await stopCli(child);
    child = undefined;
    if (dir !== undefined) await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    dir = undefined;
  });

  it('passes the delay to the server and refuses a value that is no whole number', async () => {
    dir = await mkdtemp(join(tmpdir(), 'durable-chat-boot-'));
    const dataDir = join(dir, 'data');
    const cli = await startCli([
      'dev',
      '--port',
      '0',
      '--secret-key',
      'sk_boot',
      '--data-dir',
      dataDir,
      '--boot-delay',
      '400',
    ]);
    child = cli.process;
    const created = await createSession(cli, { externalId: 'cli-cold', taskIdentifier: 'echo' });
    const token = created.body.publicAccessToken;
    const started = Date.now();
    await sendText(cli, 'cli-cold', token, 'cli-cold', 'hi');
    const read = await readOut(cli, 'cli-cold', token, { until: untilTurnCompletes(1) });
    expect(replyText(read.records)).toBe('Echo: hi');
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    const refused = await runCli(['dev', '--data-dir', dataDir, '--boot-delay', 'soon']);
    expect(refused.code).not.toBe(0);
    expect(refused.output).toContain('--boot-delay');
  });
});
