import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import type { DevServer } from '../../src/dev-server/index.js';
import { defineConformanceSuite } from './define-conformance-suite.js';
import { startDevServerTarget } from './support/dev-server-target.js';

// The whole suite against a dev server that keeps its sessions in a data folder, as
// `durable-chat dev` does: records reach readers only once synced, appends are answered
// only then, and nothing of that may change what the spec lets a client observe.

let server: DevServer | undefined;
let dataDir: string | undefined;

afterAll(async () => {
  await server?.close();
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
});

defineConformanceSuite(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'durable-chat-conformance-'));
  const started = await startDevServerTarget({ dataDir, logger: { warn() {} } });
  server = started.server;
  return started.target;
});
