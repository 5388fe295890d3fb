import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// The built bin, as `npx durable-chat dev` runs it (vitest's globalSetup builds dist/ when stale).
// From a string, not `new URL`: in a jsdom test `URL` is jsdom's, which node:url refuses.
export const CLI = resolve(dirname(fileURLToPath(import.meta.url)), '../../../dist/cli.js');

export interface RunningCli {
  url: string;
  secretKey: string;
  process: ChildProcess;
  /** Everything the process printed so far (grows while it runs). */
  readonly output: string;
}

/** Starts `durable-chat <args>` and resolves once its banner (URL, key, agents) is printed. */
export function startCli(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<RunningCli> {
  const started = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (data: Buffer) => {
      output += data.toString();
      const url = /base URL:\s+(\S+)/.exec(output)?.[1];
      const shown = /secret key:\s+(\S+)/.exec(output)?.[1];
      // A key the user supplied is masked in the banner: the test knows it from its own input.
      const secretKey = shown?.includes('…') ? suppliedKey(args, env) : shown;
      if (url !== undefined && secretKey !== undefined && output.includes('agents:'))
        resolve({
          url,
          secretKey,
          process: started,
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

/** Runs `durable-chat <args>` to its exit: its code and everything it printed. */
export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number | null; output: string }> {
  const started = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (data: Buffer) => {
    output += data.toString();
  };
  started.stdout?.on('data', collect);
  started.stderr?.on('data', collect);
  return new Promise((resolve) => started.once('exit', (code) => resolve({ code, output })));
}

export async function stopCli(child: ChildProcess | undefined): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** The key a test handed the CLI (flag first, then the environment, as the CLI reads it). */
function suppliedKey(args: string[], env: NodeJS.ProcessEnv): string | undefined {
  const flag = args.indexOf('--secret-key');
  if (flag !== -1) return args[flag + 1];
  return env.DURABLE_CHAT_SECRET_KEY || env.TRIGGER_SECRET_KEY || undefined;
}
