import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const tsxBin = fileURLToPath(new URL('../../../node_modules/.bin/tsx', import.meta.url));
const builtApp = fileURLToPath(new URL('../../../playground/dist/index.html', import.meta.url));

export interface PlaygroundProcess {
  url: string;
  /** Everything the process printed so far (for failure messages). */
  output(): string;
  stop(): Promise<void>;
}

const URL_LINE = /Playground: (http:\/\/\S+)/;

/**
 * Starts the playground exactly as `npm run playground` does after its build steps (one
 * Node process, `tsx playground/server.ts`), on a free port, and resolves with the URL it
 * prints.
 */
export async function startPlaygroundProcess(
  env: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<PlaygroundProcess> {
  if (!existsSync(builtApp)) {
    throw new Error(
      'playground/dist is missing: run `npm run test:browser` (it builds the package and the app)',
    );
  }
  const child = spawn(tsxBin, ['playground/server.ts'], {
    cwd: repoRoot,
    env: { ...process.env, PORT: '0', DURABLE_CHAT_BASE_URL: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`playground did not print its URL:\n${output}`)),
      timeoutMs,
    );
    const onData = (data: Buffer) => {
      output += data.toString();
      const match = URL_LINE.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`playground exited with ${code} before printing its URL:\n${output}`));
    });
  });
  return { url, output: () => output, stop: () => stopChild(child) };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}
