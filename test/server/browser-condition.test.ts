import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';

// These tests resolve the package by its own name, so they read the built dist/ through the
// `exports` map exactly as an app's bundler or runtime would. vitest's globalSetup
// (scripts/ensure-build.mjs) builds dist/ first when it is missing or older than src/.
const root = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
const THROWN = /durable-chat\/server was imported in a browser bundle/;

async function nodeImport(conditions: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const script = [
    "const m = await import('durable-chat/server');",
    "console.log(import.meta.resolve('durable-chat/server'));",
    'console.log(typeof m.createSessionsApi, typeof m.createChatRouteHandler);',
  ].join('\n');
  const args = [
    ...conditions.map((condition) => `--conditions=${condition}`),
    '--input-type=module',
    '-e',
    script,
  ];
  try {
    const { stdout, stderr } = await run(process.execPath, args, { cwd: root });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

// What client code would write: a used, named import of a server helper.
const CLIENT_CODE =
  "import { createSessionsApi } from 'durable-chat/server';\nglobalThis.api = createSessionsApi;";

async function bundle(platform: 'browser' | 'node') {
  return build({
    stdin: { contents: CLIENT_CODE, resolveDir: root },
    bundle: true,
    write: false,
    platform,
    format: 'esm',
    metafile: true,
    logLevel: 'silent',
    // Resolve through the package's `exports` like an app's bundler, not through this
    // repository's tsconfig `paths` (which map the entries to src/ for typechecking).
    tsconfigRaw: '{}',
  });
}

describe('durable-chat/server under the browser condition', () => {
  beforeAll(() => {
    if (!existsSync(`${root}dist/server-browser.js`))
      throw new Error(
        'dist/server-browser.js is missing after the globalSetup build (scripts/ensure-build.mjs)',
      );
  });

  it('loads the real helpers in Node even with --conditions=browser (Node is a server)', async () => {
    // Node always adds `node` to the conditions, and `node` comes before `browser`.
    const result = await nodeImport(['browser']);
    expect(result.stderr).not.toMatch(THROWN);
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split('\n')[0]).toMatch(/\/dist\/server\.js$/);
  });

  // The condition sets the runtimes' bundlers use (first matching key of `exports` wins).
  it.each([
    ['a browser bundle', ['browser'], 'dist/server-browser.js'],
    [
      'Next.js edge (webpack: edge-light, worker, then the web defaults)',
      ['edge-light', 'worker', 'browser'],
      'dist/server.js',
    ],
    ['Next.js edge (Turbopack: edge-light, then browser)', ['edge-light', 'browser'], 'dist/server.js'],
    [
      'Cloudflare Workers (wrangler: workerd, worker, browser)',
      ['workerd', 'worker', 'browser'],
      'dist/server.js',
    ],
    ['Deno', ['deno', 'browser'], 'dist/server.js'],
    ['Bun', ['bun', 'browser'], 'dist/server.js'],
    ['no condition at all', [], 'dist/server.js'],
  ])('%s resolves to %j → %s', async (_name, conditions, file) => {
    const result = await build({
      stdin: { contents: CLIENT_CODE, resolveDir: root },
      bundle: true,
      write: false,
      platform: 'neutral',
      conditions,
      format: 'esm',
      metafile: true,
      logLevel: 'silent',
      tsconfigRaw: '{}',
    });
    const inputs = Object.keys(result.metafile.inputs).filter((input) => input.startsWith('dist/server'));
    expect(inputs).toEqual([file]);
  });

  it('loads the real helpers without the browser condition', async () => {
    const result = await nodeImport([]);
    expect(result.stderr).not.toMatch(THROWN);
    expect(result.code).toBe(0);
    const [resolved, types] = result.stdout.trim().split('\n');
    expect(resolved).toMatch(/\/dist\/server\.js$/);
    expect(types).toBe('function function');
  });

  it('makes a browser bundle from esbuild fail loudly when it runs', async () => {
    const result = await bundle('browser');
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs).toContain('dist/server-browser.js');
    expect(inputs).not.toContain('dist/server.js');
    expect(result.warnings).toEqual([]);
    const code = result.outputFiles[0]?.text ?? '';
    await expect(import(`data:text/javascript,${encodeURIComponent(code)}`)).rejects.toThrow(THROWN);
  });

  it('bundles the real module for a server platform', async () => {
    const result = await bundle('node');
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs).toContain('dist/server.js');
    expect(inputs).not.toContain('dist/server-browser.js');
  });
});
