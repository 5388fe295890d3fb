import type { ChildProcess } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, startCli, stopCli } from './support/cli.js';
import { createSession } from './support/client.js';

// An app's route keeps the key it was given: the dev server must keep it too across
// restarts, or every restart breaks every app until the user copies the new key.
let dir: string | undefined;
let child: ChildProcess | undefined;
afterEach(async () => {
  await stopCli(child);
  child = undefined;
  if (dir !== undefined) await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  dir = undefined;
});

/** The environment without the key variables, plus `extra`: what the user's shell would hold. */
function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { DURABLE_CHAT_SECRET_KEY: _a, TRIGGER_SECRET_KEY: _b, ...rest } = process.env;
  return { ...rest, ...extra };
}

async function start(dataDir: string, variables: Record<string, string> = {}) {
  const cli = await startCli(['dev', '--port', '0', '--data-dir', dataDir], env(variables));
  child = cli.process;
  return cli;
}

async function stop(): Promise<void> {
  await stopCli(child);
  child = undefined;
}

describe('durable-chat dev: its secret key', () => {
  it('is generated once, saved in the data folder (printed), and reused at the next start', async () => {
    dir = await mkdtemp(join(tmpdir(), 'durable-chat-key-'));
    const dataDir = join(dir, 'data');
    const keyFile = join(dataDir, 'secret-key');

    const first = await start(dataDir);
    expect(first.secretKey).toMatch(/^sk_dev_\S+$/);
    expect(first.output).toContain(`secret key: ${first.secretKey} (new, saved in ${keyFile})`);
    expect((await readFile(keyFile, 'utf8')).trim()).toBe(first.secretKey);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    await stop();

    const second = await start(dataDir);
    expect(second.secretKey).toBe(first.secretKey);
    expect(second.output).toContain(`secret key: ${first.secretKey} (from ${keyFile})`);
    // The key an app was configured with before the restart still creates sessions.
    const created = await createSession(second, { taskIdentifier: 'echo' });
    expect(created.status).toBe(201);
  });

  it('comes from DURABLE_CHAT_SECRET_KEY, else TRIGGER_SECRET_KEY, and is then not saved', async () => {
    dir = await mkdtemp(join(tmpdir(), 'durable-chat-key-'));
    const dataDir = join(dir, 'data');

    const both = await start(dataDir, { DURABLE_CHAT_SECRET_KEY: 'sk_env_ours', TRIGGER_SECRET_KEY: 'tr_x' });
    expect(both.secretKey).toBe('sk_env_ours');
    // Supplied keys are masked in the banner (it may be a real key from the shell).
    expect(both.output).toContain('secret key: sk_…ours (from $DURABLE_CHAT_SECRET_KEY)');
    expect(both.output).not.toContain('sk_env_ours');
    expect((await createSession(both, { taskIdentifier: 'echo' })).status).toBe(201);
    await stop();

    const trigger = await start(dataDir, { TRIGGER_SECRET_KEY: 'tr_dev_theirs' });
    expect(trigger.secretKey).toBe('tr_dev_theirs');
    expect(trigger.output).toContain('(from $TRIGGER_SECRET_KEY)');
    expect(trigger.output).not.toContain('tr_dev_theirs');
    await stop();

    expect(existsSync(join(dataDir, 'secret-key'))).toBe(false);
  });

  it('--secret-key wins over the environment', async () => {
    dir = await mkdtemp(join(tmpdir(), 'durable-chat-key-'));
    const cli = await startCli(
      ['dev', '--port', '0', '--data-dir', join(dir, 'data'), '--secret-key', 'sk_flag'],
      env({ DURABLE_CHAT_SECRET_KEY: 'sk_env' }),
    );
    child = cli.process;
    expect(cli.secretKey).toBe('sk_flag');
    expect(cli.output).toContain('(from --secret-key)');
  });

  it('refuses a key with spaces, naming where it came from', async () => {
    dir = await mkdtemp(join(tmpdir(), 'durable-chat-key-'));
    const { code, output } = await runCli(
      ['dev', '--port', '0', '--data-dir', join(dir, 'data')],
      env({ TRIGGER_SECRET_KEY: 'sk with spaces' }),
    );
    expect(code).toBe(1);
    expect(output).toContain('TRIGGER_SECRET_KEY: the secret key must be one word without spaces');
  });
});
