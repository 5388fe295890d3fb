import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from './nextjs-example.js';
import { freePort, type RunningProcess, runCommand, startProcess } from './processes.js';

export const viteExampleDir = join(repoRoot, 'examples', 'vite-react');

export interface ViteReactExample {
  /** The app's Node server (`node server.js`), serving the built app and the chat route. */
  url: string;
  devServer: { url: string; secretKey: string };
  buildSeconds: number;
  output(): string;
  stop(): Promise<void>;
}

/**
 * examples/vite-react as a user runs it: the package packed as npm publishes it, installed
 * from the example's lockfile plus that tarball, `npm run build` (tsc + vite build), then
 * `durable-chat dev` (port 0) and `node server.js` (a free port) against it.
 */
export async function startViteReactExample(): Promise<ViteReactExample> {
  if (!existsSync(join(repoRoot, 'dist', 'cli.js'))) throw new Error('run `npm run build` first');
  const packDir = mkdtempSync(join(tmpdir(), 'durable-chat-vite-example-'));
  const running: RunningProcess[] = [];
  const stopAll = async () => {
    for (const process of running.reverse()) await process.stop();
    rmSync(packDir, { recursive: true, force: true });
  };
  try {
    const packed = await runCommand('npm', ['pack', '--json', '--pack-destination', packDir], {
      cwd: repoRoot,
    });
    const filename = (JSON.parse(packed.slice(packed.indexOf('['))) as Array<{ filename: string }>)[0]
      ?.filename;
    const tarball = join(packDir, filename ?? '');
    const npm = ['--no-audit', '--no-fund', '--prefer-offline'];
    await runCommand('npm', ['ci', ...npm], { cwd: viteExampleDir });
    await runCommand('npm', ['install', '--no-save', ...npm, tarball], { cwd: viteExampleDir });

    const started = performance.now();
    await runCommand('npm', ['run', 'build'], { cwd: viteExampleDir });
    const buildSeconds = (performance.now() - started) / 1000;

    const dev = await startProcess(
      process.execPath,
      [join(repoRoot, 'dist', 'cli.js'), 'dev', '--port', '0', '--data-dir', join(packDir, 'data')],
      { cwd: packDir, env: process.env, ready: /base URL:\s+(\S+)\n\s+secret key:\s+(\S+)/ },
    );
    running.push(dev.process);
    const devServer = { url: dev.match[1] ?? '', secretKey: dev.match[2] ?? '' };

    const port = await freePort();
    const app = await startProcess(process.execPath, ['server.js'], {
      cwd: viteExampleDir,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        DURABLE_CHAT_BASE_URL: devServer.url,
        DURABLE_CHAT_SECRET_KEY: devServer.secretKey,
        DURABLE_CHAT_TASK: 'demo',
      },
      ready: /Ready: /,
    });
    running.push(app.process);
    return {
      url: `http://127.0.0.1:${port}`,
      devServer,
      buildSeconds,
      output: () =>
        `--- durable-chat dev ---\n${dev.process.output()}\n--- node server.js ---\n${app.process.output()}`,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
