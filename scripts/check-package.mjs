// Packs the package as npm would publish it, checks the tarball with publint (strict) and
// arethetypeswrong, then installs it into a throwaway project and imports every entry,
// so what users install is what gets checked: the export conditions of durable-chat/server
// resolve per runtime as intended, and the React and devtools entries start with 'use client'.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';

const dir = mkdtempSync(join(tmpdir(), 'durable-chat-pack-'));
const run = (command, args, cwd) => {
  console.log(`$ ${command} ${args.join(' ')}`);
  execFileSync(command, args, { stdio: 'inherit', cwd });
};
try {
  const output = execFileSync('npm', ['pack', '--json', '--pack-destination', dir], { encoding: 'utf8' });
  const tarball = join(dir, JSON.parse(output)[0].filename);
  run('npx', ['publint', '--strict', tarball]);
  // ESM only by design: Node >= 20.19 can require() it, and one format keeps one store.
  run('npx', ['attw', '--profile', 'esm-only', tarball]);

  const project = join(dir, 'throwaway');
  execFileSync('mkdir', ['-p', project]);
  writeFileSync(join(project, 'package.json'), '{"name":"throwaway","private":true,"type":"module"}\n');
  run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      tarball,
      'ai@^6',
      'react@^19',
      '@ai-sdk/react@^3',
    ],
    project,
  );
  const script = [
    "const entries = ['durable-chat', 'durable-chat/react', 'durable-chat/devtools', 'durable-chat/server', 'durable-chat/dev-server'];",
    'for (const entry of entries) {',
    '  const loaded = await import(entry);',
    "  if (Object.keys(loaded).length === 0) throw new Error(entry + ' exports nothing');",
    '}',
    "const { SessionChatTransport } = await import('durable-chat');",
    "if (typeof SessionChatTransport !== 'function') throw new Error('no SessionChatTransport');",
    "console.log('throwaway project: all five entries import');",
  ].join('\n');
  run('node', ['--input-type=module', '-e', script], project);
  checkDevServerBundled(project);
  await checkServerConditions(project);
  await checkNoBundlerWarnings(project);
  checkClientDirective(project);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Which file of the installed package `durable-chat/server` resolves to, per runtime: the
 * condition sets its bundlers use (first matching key of `exports` wins), as esbuild
 * resolves them, plus Node's own resolution.
 */
async function checkServerConditions(project) {
  const cases = [
    ['node', ['node'], 'server.js'],
    ['edge-light (Next.js edge, Vercel Edge)', ['edge-light', 'worker', 'browser'], 'server.js'],
    ['workerd (Cloudflare Workers)', ['workerd', 'worker', 'browser'], 'server.js'],
    ['browser', ['browser'], 'server-browser.js'],
  ];
  for (const [name, conditions, expected] of cases) {
    const result = await build({
      stdin: { contents: "export * from 'durable-chat/server';", resolveDir: project },
      bundle: true,
      write: false,
      platform: 'neutral',
      conditions,
      format: 'esm',
      metafile: true,
      logLevel: 'silent',
    });
    const resolved = Object.keys(result.metafile.inputs)
      .filter((input) => /node_modules\/durable-chat\/dist\/server(-browser)?\.js$/.test(input))
      .map((input) => input.slice(input.lastIndexOf('/') + 1));
    if (resolved.length !== 1 || resolved[0] !== expected) {
      throw new Error(
        `durable-chat/server under ${name}: resolved ${resolved.join(', ')}, expected ${expected}`,
      );
    }
    console.log(`durable-chat/server under ${name} → dist/${expected}`);
  }
  const nodeResolved = execFileSync(
    'node',
    ['--input-type=module', '-e', "console.log(import.meta.resolve('durable-chat/server'))"],
    { cwd: project, encoding: 'utf8' },
  ).trim();
  if (!nodeResolved.endsWith('/dist/server.js')) throw new Error(`node resolved ${nodeResolved}`);
}

/**
 * An app's browser build of each browser entry, as esbuild (and Vite's dependency
 * pre-bundling) makes it: no warning may come from the package (a bare import of a chunk that
 * `sideEffects` marks pure used to warn once per entry).
 */
async function checkNoBundlerWarnings(project) {
  for (const entry of ['durable-chat', 'durable-chat/react', 'durable-chat/devtools']) {
    const result = await build({
      stdin: { contents: `export * from '${entry}';`, resolveDir: project },
      bundle: true,
      write: false,
      platform: 'browser',
      format: 'esm',
      external: ['ai', 'react', 'react-dom', 'react/jsx-runtime', '@ai-sdk/react'],
      logLevel: 'silent',
    });
    if (result.warnings.length > 0) {
      const texts = result.warnings.map((warning) => `${warning.id}: ${warning.text}`);
      throw new Error(`bundling ${entry} warns:\n${texts.join('\n')}`);
    }
    console.log(`${entry}: bundles for a browser without a warning`);
  }
}

/**
 * The dev server's own runtime dependencies are bundled into it (devDependencies here), so an
 * app's install does not carry them: none may be installed, and the dev server must still
 * start, answer and stop, from the installed package.
 */
function checkDevServerBundled(project) {
  const installed = readdirSync(join(project, 'node_modules'));
  const manifest = JSON.parse(
    readFileSync(join(project, 'node_modules', 'durable-chat', 'package.json'), 'utf8'),
  );
  for (const name of ['hono', '@hono', 'jose']) {
    if (installed.includes(name))
      throw new Error(`the install pulled in ${name}, a dev-server-only dependency`);
    if (Object.keys(manifest.dependencies ?? {}).some((dep) => dep === name || dep.startsWith(`${name}/`)))
      throw new Error(`${name} is a runtime dependency of the packed package`);
  }
  const script = [
    "const { startDevServer } = await import('durable-chat/dev-server');",
    'const server = await startDevServer();',
    "const response = await fetch(new URL('/no-such-route', server.url));",
    "if (response.status !== 404) throw new Error('dev server answered ' + response.status);",
    'await server.close();',
    "console.log('throwaway project: the dev server starts and answers without hono or jose installed');",
  ].join('\n');
  run('node', ['--input-type=module', '-e', script], project);
}

function checkClientDirective(project) {
  for (const entry of ['react.js', 'devtools.js']) {
    const file = join(project, 'node_modules', 'durable-chat', 'dist', entry);
    const firstLine = readFileSync(file, 'utf8').split('\n', 1)[0];
    if (firstLine !== "'use client';")
      throw new Error(`dist/${entry} starts with ${JSON.stringify(firstLine)}`);
    console.log(`dist/${entry} starts with 'use client'`);
  }
}
