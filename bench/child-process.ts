import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DurableChatError } from 'durable-chat';

/** A TypeScript child process (run through tsx) that talks over IPC. */
export interface BenchChild {
  process: ChildProcess;
  /** The next IPC message, or a rejection if the child dies first. */
  next<T>(): Promise<T>;
  stop(): Promise<void>;
}

export function spawnBenchChild(
  script: string,
  env: Record<string, string>,
  options: { exposeGc?: boolean; execArgv?: string[] } = {},
): BenchChild {
  const path = fileURLToPath(new URL(script, import.meta.url));
  const execArgv = [
    '--import',
    'tsx',
    ...(options.exposeGc ? ['--expose-gc'] : []),
    ...(options.execArgv ?? []),
    ...(process.env.BENCH_V8_FLAGS ? process.env.BENCH_V8_FLAGS.split(' ') : []),
  ];
  const child = fork(path, [], { env: { ...process.env, ...env }, execArgv, stdio: 'inherit' });
  const inbox: unknown[] = [];
  const waiting: { resolve: (value: unknown) => void; reject: (error: Error) => void }[] = [];
  let exited: Error | undefined;
  child.on('message', (message) => {
    const waiter = waiting.shift();
    if (waiter === undefined) inbox.push(message);
    else waiter.resolve(message);
  });
  child.on('exit', (code, signal) => {
    exited = new DurableChatError({
      code: 'UNEXPECTED_RESPONSE',
      message: `bench child ${script} exited (code ${code}, signal ${signal}) before answering`,
    });
    for (const waiter of waiting.splice(0)) waiter.reject(exited);
  });
  return {
    process: child,
    next<T>() {
      if (inbox.length > 0) return Promise.resolve(inbox.shift() as T);
      if (exited !== undefined) return Promise.reject(exited);
      return new Promise<T>((resolve, reject) => {
        waiting.push({ resolve: resolve as (value: unknown) => void, reject });
      });
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      if (child.connected) child.disconnect();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await gone;
      clearTimeout(timer);
    },
  };
}

/**
 * Starts the fixture server in its own process and returns its base URL. `responseDelayMs`:
 * the server holds every request that long first (a network round trip; see
 * `FixtureServerOptions`).
 */
export async function startFixtureChild(
  specs: unknown[],
  options: { responseDelayMs?: number } = {},
): Promise<{ url: string; child: BenchChild }> {
  const child = spawnBenchChild('./fixture-server-child.ts', {
    BENCH_FIXTURE_SPECS: JSON.stringify(specs),
    BENCH_FIXTURE_DELAY_MS: String(options.responseDelayMs ?? 0),
  });
  const ready = await child.next<{ type: 'ready'; url: string }>();
  return { url: ready.url, child };
}

/** Runs one measurement job in a fresh worker process; rejects with the worker's error. */
export async function runWorkerJob<RESULT>(job: { kind: string }): Promise<RESULT> {
  const child = spawnBenchChild('./client-worker.ts', { BENCH_JOB: JSON.stringify(job) }, { exposeGc: true });
  try {
    const answer = await child.next<{ ok: true; result: RESULT } | { ok: false; error: string }>();
    if (!answer.ok) {
      throw new DurableChatError({
        code: 'UNEXPECTED_RESPONSE',
        message: `${job.kind} job failed: ${answer.error}`,
      });
    }
    return answer.result;
  } finally {
    await child.stop();
  }
}
