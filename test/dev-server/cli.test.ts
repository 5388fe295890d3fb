import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadAgents } from '../../src/dev-server/load-agents.js';
import { runCli, startCli as startBin, stopCli } from './support/cli.js';
import { createSession, readOut, replyText, sendText, untilTurnCompletes } from './support/client.js';

const AGENT_MODULE = `
export const custom = {
  id: 'custom',
  run() {
    return (async function* () {
      yield { type: 'start' };
      yield { type: 'text-start', id: 't' };
      yield { type: 'text-delta', id: 't', delta: 'custom agent here' };
      yield { type: 'text-end', id: 't' };
      yield { type: 'finish' };
    })();
  },
};
export const notAnAgent = 42;
`;

let dir: string | undefined;
let child: ChildProcess | undefined;
afterEach(async () => {
  await stopCli(child);
  child = undefined;
  if (dir !== undefined) await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  dir = undefined;
});

async function startCli(args: string[]) {
  const cli = await startBin(args);
  child = cli.process;
  return cli;
}

describe('durable-chat dev', () => {
  it('prints the base URL and secret key, and serves the agents of --agents', async () => {
    dir = await mkdtemp(join(tmpdir(), 'durable-chat-cli-'));
    const modulePath = join(dir, 'agents.mjs');
    await writeFile(modulePath, AGENT_MODULE);
    const cli = await startCli([
      'dev',
      '--port',
      '0',
      '--secret-key',
      'sk_cli_test',
      '--data-dir',
      join(dir, 'data'),
      '--agents',
      modulePath,
    ]);
    expect(cli.secretKey).toBe('sk_cli_test');
    expect(cli.output).toContain('agents:     custom');
    const created = await createSession(cli, { externalId: 'cli-chat', taskIdentifier: 'custom' });
    expect(created.status).toBe(201);
    const token = created.body.publicAccessToken;
    await sendText(cli, 'cli-chat', token, 'cli-chat', 'hi');
    const read = await readOut(cli, 'cli-chat', token, { until: untilTurnCompletes(1) });
    expect(replyText(read.records)).toBe('custom agent here');
  });

  it('serves a task id it has no agent for with the demo agent, and says so once', async () => {
    dir = await mkdtemp(join(tmpdir(), 'durable-chat-cli-'));
    const cli = await startCli(['dev', '--port', '0', '--data-dir', join(dir, 'data')]);
    expect(cli.output).toContain('agents:     demo, echo; any other task id: demo');
    for (const chatId of ['first-chat', 'second-chat']) {
      const created = await createSession(cli, { externalId: chatId, taskIdentifier: 'support-agent' });
      expect(created.status).toBe(201);
      const token = created.body.publicAccessToken;
      await sendText(cli, chatId, token, chatId, 'Hello');
      const read = await readOut(cli, chatId, token, { until: untilTurnCompletes(1) });
      expect(replyText(read.records).length).toBeGreaterThan(0);
    }
    const notices = cli.output.split('\n').filter((line) => line.includes('"support-agent"'));
    expect(notices).toEqual([
      '[durable-chat dev] no agent with id "support-agent" (served: demo, echo): the demo agent answers it',
    ]);
  });

  it('prints usage and fails for an unknown command', async () => {
    const { code, output } = await runCli(['serve']);
    expect(code).toBe(1);
    expect(output).toContain('Usage: durable-chat dev');
  });
});

describe('loadAgents', () => {
  it('rejects a module that exports no agent', async () => {
    dir = await mkdtemp(join(tmpdir(), 'durable-chat-agents-'));
    const modulePath = join(dir, 'empty.mjs');
    await writeFile(modulePath, 'export const nothing = 1;\n');
    await expect(loadAgents(modulePath)).rejects.toMatchObject({ code: 'INVALID_INPUT', field: '--agents' });
  });

  it('collects agents from arrays and named exports', async () => {
    dir = await mkdtemp(join(tmpdir(), 'durable-chat-agents-'));
    const modulePath = join(dir, 'many.mjs');
    await writeFile(
      modulePath,
      'const a = { id: "a", run() {} };\nconst b = { id: "b", run() {} };\nexport default [a, b];\nexport const c = { id: "c", run() {} };\n',
    );
    expect((await loadAgents(modulePath)).map((agent) => agent.id).sort()).toEqual(['a', 'b', 'c']);
  });
});
