// Packs the package as npm would publish it, checks the tarball with publint (strict) and
// arethetypeswrong, then installs it into a throwaway project and imports all four entries,
// so what users install is what gets checked.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
    "const entries = ['durable-chat', 'durable-chat/react', 'durable-chat/server', 'durable-chat/dev-server'];",
    'for (const entry of entries) {',
    '  const loaded = await import(entry);',
    "  if (Object.keys(loaded).length === 0) throw new Error(entry + ' exports nothing');",
    '}',
    "const { SessionChatTransport } = await import('durable-chat');",
    "if (typeof SessionChatTransport !== 'function') throw new Error('no SessionChatTransport');",
    "console.log('throwaway project: all four entries import');",
  ].join('\n');
  run('node', ['--input-type=module', '-e', script], project);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
