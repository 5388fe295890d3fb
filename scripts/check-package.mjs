// Packs the package as npm would publish it, then checks the tarball with publint (strict)
// and arethetypeswrong, so what users install is what gets checked.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'durable-chat-pack-'));
const run = (command, args) => {
  console.log(`$ ${command} ${args.join(' ')}`);
  execFileSync(command, args, { stdio: 'inherit' });
};
try {
  const output = execFileSync('npm', ['pack', '--json', '--pack-destination', dir], { encoding: 'utf8' });
  const tarball = join(dir, JSON.parse(output)[0].filename);
  run('npx', ['publint', '--strict', tarball]);
  // ESM only by design: Node >= 20.19 can require() it, and one format keeps one store.
  run('npx', ['attw', '--profile', 'esm-only', tarball]);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
