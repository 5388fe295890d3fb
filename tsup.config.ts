import { readFile, writeFile } from 'node:fs/promises';
import { defineConfig } from 'tsup';

const CLIENT_ENTRY = 'dist/react.js';
const USE_CLIENT = "'use client';\n";

// Next.js (and any React Server Components bundler) needs `'use client'` on the first line
// of the hooks' module. esbuild drops module directives when it bundles and tsup's
// `banner` would stamp every file, shared chunks included (the server entry imports those,
// and a client boundary there would break route handlers), so the directive is added to
// the React entry alone after the build, and its source map shifted by the one line.
async function markReactEntryAsClient(): Promise<void> {
  const code = await readFile(CLIENT_ENTRY, 'utf8');
  if (code.startsWith(USE_CLIENT)) return;
  await writeFile(CLIENT_ENTRY, USE_CLIENT + code);
  const mapFile = `${CLIENT_ENTRY}.map`;
  const map = JSON.parse(await readFile(mapFile, 'utf8')) as { mappings: string };
  map.mappings = `;${map.mappings}`;
  await writeFile(mapFile, JSON.stringify(map));
}

// One build, code splitting on: the entries share a single copy of the error classes,
// the protocol core and the store, so `instanceof` and the store work across entries.
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    react: 'src/react/index.ts',
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
    entry: {
      index: 'src/index.ts',
      react: 'src/react/index.ts',
      server: 'src/server/index.ts',
      'dev-server': 'src/dev-server/index.ts',
    },
  },
  sourcemap: true,
  clean: true,
  external: ['ai', 'react', 'react-dom', '@ai-sdk/react', /^node:/],
  onSuccess: markReactEntryAsClient,
});
