import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, type RunningProcess, runCommand, startProcess } from './processes.js';

export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
export const exampleDir = join(repoRoot, 'examples', 'nextjs');

export interface NextjsExample {
  /** The app (`next start`). */
  url: string;
  /** The dev server the app's routes and the browser talk to. */
  devServer: { url: string; secretKey: string };
  /** Seconds `next build` took. */
  buildSeconds: number;
  /** The output of both servers (for failure messages). */
  output(): string;
  stop(): Promise<void>;
}

const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...process.env,
  NEXT_TELEMETRY_DISABLED: '1',
  ...extra,
});

/**
 * The example as a user runs it: the package packed as npm publishes it, installed into
 * the example from its lockfile plus that tarball (`npm ci`, then `npm install --no-save`),
 * `next build`, then `durable-chat dev` (port 0) and `next start` (a free port) with the
 * example's environment variables.
 */
export async function startNextjsExample(): Promise<NextjsExample> {
  if (!existsSync(join(repoRoot, 'dist', 'cli.js'))) throw new Error('run `npm run build` first');
  const packDir = mkdtempSync(join(tmpdir(), 'durable-chat-example-'));
  const running: RunningProcess[] = [];
  try {
    const packed = await runCommand('npm', ['pack', '--json', '--pack-destination', packDir], {
      cwd: repoRoot,
    });
    const tarball = join(
      packDir,
      (JSON.parse(packed.slice(packed.indexOf('['))) as Array<{ filename: string }>)[0]?.filename ?? '',
    );
    await runCommand('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: exampleDir });
    await runCommand(
      'npm',
      ['install', '--no-save', '--no-audit', '--no-fund', '--prefer-offline', tarball],
      {
        cwd: exampleDir,
      },
    );

    const started = performance.now();
    await runCommand(join(exampleDir, 'node_modules', '.bin', 'next'), ['build'], {
      cwd: exampleDir,
      env: env(),
    });
    const buildSeconds = (performance.now() - started) / 1000;

    const dev = await startProcess(
      process.execPath,
      [join(repoRoot, 'dist', 'cli.js'), 'dev', '--port', '0', '--data-dir', join(packDir, 'data')],
      { cwd: packDir, env: env(), ready: /base URL:\s+(\S+)\n\s+secret key:\s+(\S+)/ },
    );
    running.push(dev.process);
    const devServer = { url: dev.match[1] ?? '', secretKey: dev.match[2] ?? '' };

    const port = await freePort();
    const next = await startProcess(
      join(exampleDir, 'node_modules', '.bin', 'next'),
      ['start', '--port', String(port), '--hostname', '127.0.0.1'],
      {
        cwd: exampleDir,
        env: env({
          DURABLE_CHAT_BASE_URL: devServer.url,
          DURABLE_CHAT_SECRET_KEY: devServer.secretKey,
          DURABLE_CHAT_TASK: 'demo',
        }),
        ready: /Ready in/,
      },
    );
    running.push(next.process);
    return {
      url: `http://127.0.0.1:${port}`,
      devServer,
      buildSeconds,
      output: () =>
        `--- durable-chat dev ---\n${dev.process.output()}\n--- next start ---\n${next.process.output()}`,
      async stop() {
        for (const process of running.reverse()) await process.stop();
        rmSync(packDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    for (const process of running.reverse()) await process.stop();
    rmSync(packDir, { recursive: true, force: true });
    throw error;
  }
}

/** The dev server's view of a chat's session: its run state and `.out` length. */
/** What the dev server's inspection route says of a chat's session (the parts the tests read). */
export interface SessionInfo {
  run: { state: string } | null;
  /** `.in`: `nextSeq` counts every input appended (messages, tool answers, stops). */
  in: { nextSeq: number };
  out: { nextSeq: number };
}

export async function sessionInfo(
  devServer: { url: string; secretKey: string },
  chatId: string,
): Promise<SessionInfo> {
  const response = await fetch(`${devServer.url}/__dev/sessions/${encodeURIComponent(chatId)}`, {
    headers: { authorization: `Bearer ${devServer.secretKey}` },
  });
  if (!response.ok) throw new Error(`session ${chatId}: ${response.status} ${await response.text()}`);
  return (await response.json()) as SessionInfo;
}
