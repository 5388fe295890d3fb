import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// CONTRIBUTING.md promises a fresh clone two commands, and .ci/run runs them first: the
// promise, the scripts it names and CI must not drift apart.
const root = fileURLToPath(new URL('../..', import.meta.url));
const read = (file: string) => readFileSync(`${root}${file}`, 'utf8');

describe('CONTRIBUTING.md', () => {
  it('opens with the two fresh-clone commands, which package.json and .ci/run carry', () => {
    const firstBlock = /```bash\n([\s\S]*?)```/.exec(read('CONTRIBUTING.md'))?.[1] ?? '';
    const commands = firstBlock
      .split('\n')
      .map((line) => line.replace(/#.*$/, '').trim())
      .filter((line) => line !== '');
    expect(commands).toEqual(['npm ci && npm run playground', 'npm ci && npm test']);
    const scripts = JSON.parse(read('package.json')).scripts as Record<string, string>;
    expect(scripts.playground).toBeDefined();
    expect(scripts.test).toBeDefined();
    const ci = read('.ci/run');
    expect(ci).toMatch(/^npm ci /m);
    expect(ci).toMatch(/^npm test /m);
    expect(ci).toMatch(/^node scripts\/check-playground\.mjs$/m);
  });

  it('is what the README sends contributors to, and the README keeps no contributor section', () => {
    const readme = read('README.md');
    expect(readme).toContain('(https://github.com/durable-chat/durable-chat/blob/main/CONTRIBUTING.md)');
    for (const heading of ['## Quick start', '## Layout', '## Development'])
      expect(readme).not.toContain(`\n${heading}\n`);
  });
});
