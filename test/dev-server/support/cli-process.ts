import type { ChildProcess } from 'node:child_process';
import { startCli as startRunningCli, stopCli } from './cli.js';

/** A `durable-chat dev` process, started as a user starts it: the package's bin, `dist/cli.js`. */
export interface CliProcess {
  url: string;
  secretKey: string;
  /** Everything printed so far (stdout and stderr). */
  output(): string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** `startCli` of ./cli.js, shaped for the tests that stop the process through it. */
export async function startCli(args: string[]): Promise<CliProcess> {
  const running = await startRunningCli(args);
  return {
    url: running.url,
    secretKey: running.secretKey,
    output: () => running.output,
    child: running.process,
    stop: () => stopCli(running.process),
  };
}
