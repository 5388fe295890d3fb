import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { loadAgents } from '../../src/dev-server/load-agents.js';
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
  if (child !== undefined && child.exitCode === null) {
    const exited = new Promise((resolve) => child?.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  child = undefined;
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

// The built bin, as `npx durable-chat dev` runs it (vitest's globalSetup builds dist/ when stale).
const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

interface RunningCli {
  url: string;
  secretKey: string;
  /** Everything the process printed so far (grows while it runs). */
  readonly output: string;
}

function startCli(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<RunningCli> {
  const started = spawn(process.execPath, [CLI, ...args], {
    cwd: process.cwd(),
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child = started;
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (data: Buffer) => {
      output += data.toString();
      const url = /base URL:\s+(\S+)/.exec(output)?.[1];
      const secretKey = /secret key:\s+(\S+)/.exec(output)?.[1];
      if (url !== undefined && secretKey !== undefined && output.includes('agents:'))
        resolve({
          url,
          secretKey,
          get output() {
            return output;
          },
        });
    };
    started.stdout?.on('data', onData);
    started.stderr?.on('data', onData);
    started.once('exit', (code) => reject(new Error(`cli exited with ${code}: ${output}`)));
  });
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
    const started = spawn(process.execPath, [CLI, 'serve'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = started;
    let output = '';
    started.stdout?.on('data', (data: Buffer) => {
      output += data.toString();
    });
    const code = await new Promise((resolve) => started.once('exit', resolve));
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
