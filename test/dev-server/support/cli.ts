import { type ChildProcess, spawn } from 'node:child_process';

/** A `durable-chat dev` process, started as a user starts it: the package's bin, `dist/cli.js`. */
export interface CliProcess {
  url: string;
  secretKey: string;
  /** Everything printed so far (stdout and stderr). */
  output(): string;
  child: ChildProcess;
  stop(): Promise<void>;
}

export function startCli(args: string[]): Promise<CliProcess> {
  // vitest's globalSetup (scripts/ensure-build.mjs) rebuilds dist/ when src/ is newer.
  const child = spawn(process.execPath, ['dist/cli.js', ...args], {
    cwd: process.cwd(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };
  return new Promise((resolve, reject) => {
    const onData = (data: Buffer) => {
      output += data.toString();
      const url = /base URL:\s+(\S+)/.exec(output)?.[1];
      const secretKey = /secret key:\s+(\S+)/.exec(output)?.[1];
      if (url !== undefined && secretKey !== undefined && output.includes('agents:'))
        resolve({ url, secretKey, output: () => output, child, stop });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`cli exited with ${code}: ${output}`)));
  });
}
