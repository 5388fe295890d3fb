import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const dist = (file: string) => fileURLToPath(new URL(`../dist/${file}`, import.meta.url));

// The playground is a user of the package: it imports the public entries, resolved to the
// build in ../dist (run `npm run build` first), never to ../src.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  plugins: [react()],
  resolve: {
    alias: [
      { find: /^durable-chat\/react$/, replacement: dist('react.js') },
      { find: /^durable-chat\/devtools$/, replacement: dist('devtools.js') },
      { find: /^durable-chat$/, replacement: dist('index.js') },
    ],
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: true,
    // ai and zod are big; the playground is a demo, not a budget.
    chunkSizeWarningLimit: 1024,
    rollupOptions: {
      onwarn(warning, warn) {
        // zod's `/* @__PURE__ */` comments in odd places: harmless, and noisy on every build.
        if (warning.code === 'INVALID_ANNOTATION') return;
        warn(warning);
      },
    },
  },
});
