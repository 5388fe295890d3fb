import { defineConfig } from 'vitest/config';

// Browser tests: Debian's Chromium driven by playwright-core against the built playground
// (`npm run test:browser` builds it first). One file at a time: each file starts its own
// playground process and browser, and two cores are not enough to run them side by side
// without timing noise.
export default defineConfig({
  test: {
    name: 'browser',
    include: ['test/browser/**/*.test.ts'],
    environment: 'node',
    testTimeout: 90_000,
    hookTimeout: 90_000,
    fileParallelism: false,
    retry: 0,
  },
});
