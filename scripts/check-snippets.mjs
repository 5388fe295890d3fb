// Typechecks every ```ts / ```tsx block of README.md, CONTRIBUTING.md and docs/*.md, so the code a reader
// copies compiles against the package as published.
//
// Each block becomes one module in a fresh folder under .tmp/ (kept when a snippet fails, to
// look at), compiled by tsc with an app's strict settings. `durable-chat` and its subpaths resolve through the package's own `exports`
// map to the built dist/*.d.ts (built first when stale), which is what an app that
// installed the package sees: a type that src/ has but the published types lost fails here.
//
// Conventions, in the Markdown (HTML comments render as nothing on GitHub):
// - ```ts partial: <reason>   a deliberate outline, not code: skipped, the reason printed.
// - <!-- snippet-prelude ... --> right above a block: TypeScript put before the block, for
//   what the snippet takes from the reader's app (`declare const myModel: LanguageModel;`).
// - <!-- snippet-dir: test/conformance --> right above a block: the block is written as if
//   it lived in that folder of this repository, so its relative imports resolve there.
// App modules the docs import by name (`@/auth`) are declared once, in APP_MODULES below.
//
// Usage: node scripts/check-snippets.mjs [file.md ...]   (default: README.md, CONTRIBUTING.md and docs/*.md)
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBuild } from './ensure-build.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const LANGUAGES = new Set(['ts', 'tsx', 'typescript']);

// Modules of the reader's app, or packages this repository does not install, that the
// docs import. Typed by what the snippets need from them, nothing more.
const APP_MODULES = `
declare module '@/auth' {
  /** The signed-in user of the request being handled (Auth.js / NextAuth style). */
  export function auth(): Promise<{ id: string } | null>;
}
declare module '@ai-sdk/openai' {
  import type { LanguageModel } from 'ai';
  export function openai(modelId: string): LanguageModel;
}
`;

const COMPILER_OPTIONS = {
  target: 'ES2022',
  lib: ['ES2023', 'DOM', 'DOM.Iterable'],
  module: 'ESNext',
  moduleResolution: 'Bundler',
  moduleDetection: 'force',
  jsx: 'react-jsx',
  strict: true,
  isolatedModules: true,
  skipLibCheck: true,
  noEmit: true,
  types: ['node'],
};

/** The blocks of one Markdown file, with the directives written above each. */
function extractBlocks(file) {
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  const blocks = [];
  for (let index = 0; index < lines.length; index++) {
    const open = /^(\s*)(`{3,})\s*(\S*)\s*(.*)$/.exec(lines[index] ?? '');
    if (open === null) continue;
    const [, indent, fence, language, rest] = open;
    let end = index + 1;
    while (end < lines.length && !(lines[end] ?? '').trim().startsWith(fence)) end++;
    if (LANGUAGES.has(language)) {
      const code = lines
        .slice(index + 1, end)
        .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line));
      blocks.push({
        file,
        line: index + 1,
        language,
        code,
        partial: /^partial\b/.test(rest)
          ? rest.replace(/^partial\b[\s:–-]*/, '') || 'marked partial'
          : undefined,
        ...directivesAbove(lines, index),
      });
    }
    index = end;
  }
  return blocks;
}

/** The `snippet-*` HTML comments directly above line `index` (blank lines allowed). */
function directivesAbove(lines, index) {
  const found = { prelude: [], dir: undefined };
  let cursor = index - 1;
  for (;;) {
    while (cursor >= 0 && (lines[cursor] ?? '').trim() === '') cursor--;
    if (cursor < 0 || !(lines[cursor] ?? '').trim().endsWith('-->')) return found;
    let start = cursor;
    while (start >= 0 && !(lines[start] ?? '').includes('<!--')) start--;
    if (start < 0) return found;
    const comment = lines
      .slice(start, cursor + 1)
      .join('\n')
      .replace(/^\s*<!--/, '')
      .replace(/-->\s*$/, '');
    const directive = /^\s*snippet-(prelude|dir)\b:?([\s\S]*)$/.exec(comment);
    if (directive === null) return found;
    if (directive[1] === 'dir') found.dir = directive[2].trim();
    else found.prelude.unshift(...directive[2].replace(/^\n/, '').trimEnd().split('\n'));
    cursor = start - 1;
  }
}

function markdownFiles() {
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', 'CONTRIBUTING.md', ...docs];
}

function main(files) {
  const blocks = files.flatMap(extractBlocks);
  mkdirSync(join(root, '.tmp'), { recursive: true });
  const outDir = mkdtempSync(join(root, '.tmp', 'snippets-'));

  const sources = new Map(); // snippet path (relative to outDir) -> block and prelude size
  let usesDir = false;
  for (const block of blocks) {
    if (block.partial !== undefined) {
      console.log(`skip ${block.file}:${block.line} (partial: ${block.partial})`);
      continue;
    }
    const name = `${block.file.replace(/[/.]/g, '-')}-${block.line}.${block.language === 'tsx' ? 'tsx' : 'ts'}`;
    const path = block.dir === undefined ? name : join(block.dir, name);
    if (block.dir !== undefined) usesDir = true;
    mkdirSync(dirname(join(outDir, path)), { recursive: true });
    writeFileSync(join(outDir, path), [...block.prelude, ...block.code, ''].join('\n'));
    sources.set(path, { block, preludeLines: block.prelude.length });
  }

  writeFileSync(join(outDir, 'app-modules.d.ts'), APP_MODULES);
  const compilerOptions = { ...COMPILER_OPTIONS };
  // A snippet "in" test/conformance is written to <outDir>/test/conformance/, and rootDirs
  // lays <outDir> over the repository root, so its `./x.js` resolves next to it.
  if (usesDir) compilerOptions.rootDirs = ['.', relative(outDir, root)];
  writeFileSync(
    join(outDir, 'tsconfig.json'),
    `${JSON.stringify({ compilerOptions, include: ['**/*.ts', '**/*.tsx'] }, null, 2)}\n`,
  );

  const tsc = spawnSync(
    process.execPath,
    [join(root, 'node_modules/typescript/bin/tsc'), '-p', outDir, '--pretty', 'false'],
    { cwd: root, encoding: 'utf8' },
  );
  if (tsc.error !== undefined) throw tsc.error;

  // tsc reports <outDir>/<snippet>(line,col); point at the Markdown line instead.
  let errors = 0;
  for (const line of `${tsc.stdout}${tsc.stderr}`.split('\n')) {
    if (line.trim() === '') continue;
    const located = /^(.*?)\((\d+),(\d+)\): (.*)$/.exec(line);
    const snippet = located && sources.get(relative(outDir, join(root, located[1])));
    if (located !== null && snippet !== undefined) {
      errors++;
      const fileLine = Number(located[2]);
      const where =
        fileLine > snippet.preludeLines
          ? `${snippet.block.file}:${snippet.block.line + fileLine - snippet.preludeLines}:${located[3]}`
          : `${snippet.block.file}:${snippet.block.line} (in its snippet-prelude)`;
      console.error(`${where}: ${located[4]}`);
    } else {
      if (/error TS/.test(line)) errors++;
      console.error(line);
    }
  }
  const skipped = blocks.length - sources.size;
  const checked = `${sources.size} TypeScript snippets checked, ${skipped} skipped (partial)`;
  if (tsc.status !== 0) {
    console.error(
      `check-snippets: ${checked}; ${errors} error(s); the modules are in ${relative(root, outDir)}`,
    );
    process.exitCode = 1;
  } else {
    console.log(`check-snippets: ${checked}; all compile`);
    rmSync(outDir, { recursive: true, force: true });
  }
}

const args = process.argv.slice(2);
await ensureBuild();
main(args.length > 0 ? args.map((file) => relative(root, resolve(file))) : markdownFiles());
