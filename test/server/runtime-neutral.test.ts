import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

function sources(folder: string): Array<{ path: string; text: string }> {
  return readdirSync(`${root}${folder}`)
    .filter((name) => name.endsWith('.ts'))
    .map((name) => ({ path: `${folder}/${name}`, text: readFileSync(`${root}${folder}/${name}`, 'utf8') }));
}

describe('server helpers and route client run anywhere', () => {
  it('bundle for a neutral platform with no Node built-in', async () => {
    for (const entry of ['src/server/index.ts', 'src/route-client/index.ts']) {
      const result = await build({
        entryPoints: [`${root}${entry}`],
        bundle: true,
        write: false,
        platform: 'neutral',
        format: 'esm',
        metafile: true,
        logLevel: 'silent',
        // Type-only at runtime: `ai` is imported for types alone and must not be needed.
        external: ['ai'],
      });
      const inputs = Object.keys(result.metafile.inputs);
      // A bare built-in (`crypto`) cannot resolve on the neutral platform and fails the build.
      expect(inputs.filter((input) => input.startsWith('node:'))).toEqual([]);
      expect(result.outputFiles[0]?.text).not.toMatch(/\bfrom ['"]ai['"]/);
    }
  });

  it('use no Node globals, and the browser side never reaches into the server side', () => {
    for (const { path, text } of [...sources('src/server'), ...sources('src/route-client')]) {
      expect(text, path).not.toMatch(/\bBuffer\b|\bprocess\.|from 'node:/);
    }
    for (const { path, text } of sources('src/route-client')) {
      expect(text, path).not.toMatch(/from '\.\.\/server\//);
    }
  });
});
