import { readdir, readFile, writeFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { defineConfig } from 'tsup';

/** Entries that hold hooks or components: client modules for React Server Components bundlers. */
const CLIENT_ENTRIES = ['dist/react.js', 'dist/devtools.js'];
const USE_CLIENT = "'use client';\n";

// Next.js (and any React Server Components bundler) needs `'use client'` on the first line
// of the hooks' module (and the devtools panel's). esbuild drops module directives when it bundles and tsup's
// `banner` would stamp every file, shared chunks included (the server entry imports those,
// and a client boundary there would break route handlers), so the directive is added to
// the React entry alone after the build, and its source map shifted by the one line.
async function markClientEntries(): Promise<void> {
  for (const entry of CLIENT_ENTRIES) {
    const code = await readFile(entry, 'utf8');
    if (code.startsWith(USE_CLIENT)) continue;
    await writeFile(entry, USE_CLIENT + code);
    const mapFile = `${entry}.map`;
    const map = JSON.parse(await readFile(mapFile, 'utf8')) as { mappings: string };
    map.mappings = `;${map.mappings}`;
    await writeFile(mapFile, JSON.stringify(map));
  }
}

const BROWSER_STUB = 'dist/server-browser.js';

/**
 * The browser stub of `durable-chat/server` must throw as a bundle loads it. With code
 * splitting, esbuild gives every entry a bare import of the shared helper chunk; the stub uses
 * nothing from it, and since the package marks only the stub as having side effects, bundlers
 * warn about that import (and drop it). The stub is self-contained: the bare import goes.
 */
async function detachBrowserStub(): Promise<void> {
  const code = await readFile(BROWSER_STUB, 'utf8');
  if (/from ['"]\.\/chunk-/.test(code)) throw new Error(`${BROWSER_STUB} must not use shared chunks`);
  await writeFile(BROWSER_STUB, code.replace(/^import ['"]\.\/chunk-[\w-]+\.js['"];\n/gm, ''));
}

/** What an app's bundler reads: the browser entries and the server helpers. */
const APP_ENTRIES = ['dist/index.js', 'dist/react.js', 'dist/devtools.js', 'dist/server.js'];

/**
 * Code splitting gives an entry bare imports (`import './chunk-x.js';`) of shared chunks it
 * uses nothing of. Every such chunk is side-effect free (pure protocol modules and helpers, as
 * `sideEffects` declares), so bundlers drop the import, and esbuild warns once per import in
 * the app's build. The lines go here instead; what the entries do use they import by name.
 */
async function dropBareChunkImports(): Promise<void> {
  for (const entry of APP_ENTRIES) {
    const code = await readFile(entry, 'utf8');
    // Emptied, not removed: every other line keeps its number, so the source map still holds.
    const stripped = code.replace(/^import ['"]\.\/chunk-[\w-]+\.js['"];$/gm, '');
    if (stripped !== code) await writeFile(entry, stripped);
  }
}

/** Runtime dependencies of the dev server alone (and `durable-chat dev`). */
const DEV_SERVER_ONLY = ['hono', '@hono/node-server', 'jose'];

/**
 * Bundled code keeps its licences: the MIT notices of what the dev server bundles go to
 * dist/THIRD-PARTY-LICENSES.txt (in the tarball with the code that carries them).
 */
async function writeThirdPartyLicenses(): Promise<void> {
  const sections: string[] = [];
  for (const name of DEV_SERVER_ONLY) {
    const folder = `node_modules/${name}`;
    const manifest = JSON.parse(await readFile(`${folder}/package.json`, 'utf8')) as { version: string };
    const file = (await readdir(folder)).find((entry) => /^licen[cs]e/i.test(entry));
    if (file === undefined) throw new Error(`${name} has no licence file to ship with its bundled code`);
    sections.push(
      `${name}@${manifest.version} (bundled into the dev server)\n\n${await readFile(`${folder}/${file}`, 'utf8')}`,
    );
  }
  await writeFile('dist/THIRD-PARTY-LICENSES.txt', `${sections.join(`\n${'-'.repeat(72)}\n\n`)}\n`);
}

// One build, code splitting on: the entries share a single copy of the error classes,
// the protocol core and the store, so `instanceof` and the store work across entries.
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    react: 'src/react/index.ts',
    devtools: 'src/devtools/index.ts',
    server: 'src/server/index.ts',
    'server-browser': 'src/server/browser.ts',
    'dev-server': 'src/dev-server/index.ts',
    cli: 'src/dev-server/cli.ts',
  },
  format: ['esm'],
  target: 'es2022',
  platform: 'neutral',
  splitting: true,
  treeshake: true,
  dts: {
    // Their types too: `DevServerApp.app` is a hono app, and they are not installed with the package.
    resolve: DEV_SERVER_ONLY,
    entry: {
      index: 'src/index.ts',
      react: 'src/react/index.ts',
      devtools: 'src/devtools/index.ts',
      server: 'src/server/index.ts',
      'dev-server': 'src/dev-server/index.ts',
    },
  },
  sourcemap: true,
  clean: true,
  external: ['ai', 'react', 'react-dom', '@ai-sdk/react', /^node:/, ...builtinModules],
  // Only the dev server uses these: bundled into its chunks, so an app's `npm install` does
  // not pull them in (they are devDependencies; docs/performance.md#install-footprint).
  noExternal: DEV_SERVER_ONLY,
  onSuccess: async () => {
    await markClientEntries();
    await detachBrowserStub();
    await dropBareChunkImports();
    await writeThirdPartyLicenses();
  },
});
