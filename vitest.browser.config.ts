import { defineConfig } from 'vitest/config';

// Browser tests: Debian's Chromium driven by playwright-core against the built playground
// (`npm run test:browser` builds it first; the globalSetup rebuilds dist/ when it is older
// than src/, under the same lock as `npm test`'s). One file at a time: each file starts its own
// playground process and browser, and two cores are not enough to run them side by side
// without timing noise.
export default defineConfig({
  test: {
    name: 'browser',
    globalSetup: ['./scripts/ensure-build.mjs'],
    include: ['test/browser/**/*.test.ts'],
    environment: 'node',
    testTimeout: 90_000,
    hookTimeout: 90_000,
    fileParallelism: false,
    retry: 0,
  },
});
