import { afterAll } from 'vitest';
import type { DevServer } from '../../src/dev-server/index.js';
import { defineConformanceSuite } from './define-conformance-suite.js';
import { startDevServerTarget } from './support/dev-server-target.js';

// The spec promises neither the append's `seq` nor `session-in-event-id` (wire notes only):
// the whole suite must hold against a server that sends neither.

let server: DevServer | undefined;

afterAll(async () => {
  await server?.close();
});

defineConformanceSuite(async () => {
  const started = await startDevServerTarget(
    { wire: { appendSeq: false, sessionInEventId: false }, logger: { warn() {} } },
    { turnCorrelation: false },
  );
  server = started.server;
  return started.target;
});
