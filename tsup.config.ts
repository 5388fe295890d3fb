import { defineConfig } from 'tsup';

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
});
