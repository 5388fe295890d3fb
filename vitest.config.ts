import { defineConfig } from 'vitest/config';

// Everything runs once on ai 6 (the devDependency). The transport, session and React suites run a
// second time on ai 7 (installed as the aliases `ai-v7` / `ai-sdk-react-v4`), because the
// package supports both majors.
//
// The globalSetup builds dist/ first when it is missing or older than src/: the bench
// harness and the browser-condition tests import the package by its own name, through its
// `exports` map, so they test the real build, and a fresh clone's `npm test` needs no
// hidden build step.
const aiSeven = { ai: 'ai-v7', '@ai-sdk/react': 'ai-sdk-react-v4' };

export default defineConfig({
  test: {
    globalSetup: ['./scripts/ensure-build.mjs'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'ai6',
          include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
          exclude: ['test/browser/**', 'test/examples/**', 'node_modules/**'],
        },
      },
      {
        extends: true,
        resolve: { alias: aiSeven },
        test: {
          name: 'ai7',
          include: [
            'test/transport/**/*.test.ts',
            'test/react/**/*.test.tsx',
            'test/react/**/*.test.ts',
            'test/session/**/*.test.ts',
            'test/devtools/**/*.test.tsx',
            'test/ai-version.test.ts',
          ],
          exclude: ['test/browser/**', 'test/examples/**', 'node_modules/**'],
        },
      },
    ],
  },
});
