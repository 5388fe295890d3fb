import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

// The link check is what keeps the docs an npm user reads alive: it must judge the package
// as npm packs it (a file left out of `files` is dead), follow the anchors, and refuse any
// relative link that leaves the package.
const root = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const REPOSITORY = 'https://github.com/example/pkg';

function fixturePackage(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'check-links-'));
  dirs.push(dir);
  const manifest = {
    name: 'fixture',
    version: '1.0.0',
    files: ['docs', 'README.md'],
    repository: { type: 'git', url: `git+${REPOSITORY}.git` },
  };
  writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

async function checkLinks(dir: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(root, 'scripts/check-links.mjs'), dir]);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

const GUIDE = ['# Guide', '', '## Which file `x` loads', '', 'Back to [the top](#guide).', ''].join('\n');

describe('scripts/check-links.mjs', () => {
  it('passes packed files, folders, headings, repository paths and other sites', async () => {
    const dir = fixturePackage({
      'README.md': [
        '# Fixture',
        '![shot](docs/shot.png) [guide](docs/guide.md#which-file-x-loads) [docs](docs/)',
        `[example](${REPOSITORY}/tree/main/examples/app) [site](https://example.org/missing)`,
        '[ref]: docs/guide.md',
        '`[in code](../nowhere.md)`',
        '```md',
        '[in a block](../nowhere.md)',
        '```',
        '',
      ].join('\n'),
      'docs/guide.md': GUIDE,
      'docs/shot.png': 'png',
      'examples/app/index.js': '',
    });
    const result = await checkLinks(dir);
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('check-links: 7 links in 2 packed Markdown files resolve');
    expect(result.code).toBe(0);
  }, 60_000);

  it('fails on unpacked files, links out of the package, missing headings and repository paths', async () => {
    const dir = fixturePackage({
      'README.md': [
        '# Fixture',
        '[example](examples/app/README.md)', // 2: exists on disk, not packed
        '[spec](../shared/spec.md)', // 3
        '[guide](docs/guide.md#no-such-heading)', // 4
        `[gone](${REPOSITORY}/blob/main/examples/gone.md)`, // 5
        '<img src="docs/missing.png">', // 6
        '',
      ].join('\n'),
      'docs/guide.md': GUIDE,
      'examples/app/README.md': '# App\n',
    });
    const result = await checkLinks(dir);
    const problems = result.stderr.split('\n').filter((line) => line.startsWith('README.md:'));
    expect(problems).toEqual([
      'README.md:2: examples/app/README.md: not in the package (examples/app/README.md)',
      "README.md:3: ../shared/spec.md: leaves the package (link the repository's absolute URL instead)",
      'README.md:4: docs/guide.md#no-such-heading: docs/guide.md has no heading #no-such-heading',
      `README.md:5: ${REPOSITORY}/blob/main/examples/gone.md: no such path in the repository`,
      'README.md:6: docs/missing.png: not in the package (docs/missing.png)',
    ]);
    expect(result.stderr).toContain('check-links: 5 dead link(s) of 6 in 2 packed Markdown files');
    expect(result.code).toBe(1);
  }, 60_000);

  it('passes this package', async () => {
    const result = await checkLinks(root);
    expect(result.stdout).toMatch(/check-links: \d+ links in \d+ packed Markdown files resolve/);
    expect(result.code).toBe(0);
  }, 60_000);
});
