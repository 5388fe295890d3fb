import { afterAll } from 'vitest';
import type { DevServer } from '../../src/dev-server/index.js';
import { defineConformanceSuite } from './define-conformance-suite.js';
import { startDevServerTarget } from './support/dev-server-target.js';

let server: DevServer | undefined;

afterAll(async () => {
  await server?.close();
});

defineConformanceSuite(async () => {
  const started = await startDevServerTarget();
  server = started.server;
  return started.target;
});
