import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

function startCli(args: string[]): Promise<{ url: string; secretKey: string; output: string }> {
  const started = spawn(process.execPath, ['--import', 'tsx', 'src/dev-server/cli.ts', ...args], {
    cwd: process.cwd(),
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
        resolve({ url, secretKey, output });
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

  it('prints usage and fails for an unknown command', async () => {
    const started = spawn(process.execPath, ['--import', 'tsx', 'src/dev-server/cli.ts', 'serve'], {
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
