import { defineConfig } from 'vitest/config';

// The examples, built and driven as a user would (examples/nextjs: pack, install, `next
// build`, `next start`; examples/vite-react: pack, install, `vite build`, its Node server;
// then Chromium). Slow by nature, so outside `npm test`; `.ci/run` runs it.
export default defineConfig({
  test: {
    name: 'examples',
    include: ['test/examples/**/*.test.ts'],
    environment: 'node',
    // The example installs the packed package: build dist/ first when missing or stale.
    globalSetup: ['./scripts/ensure-build.mjs'],
    testTimeout: 120_000,
    hookTimeout: 600_000,
    fileParallelism: false,
    retry: 0,
  },
});
