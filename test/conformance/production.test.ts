import { describe } from 'vitest';
import { defineConformanceSuite } from './define-conformance-suite.js';

const baseURL = process.env.DURABLE_CHAT_CONFORMANCE_URL;
const secretKey = process.env.DURABLE_CHAT_CONFORMANCE_SECRET_KEY;
const taskIdentifier = process.env.DURABLE_CHAT_CONFORMANCE_TASK;
/** Optional JSON: valid metadata for an agent whose schema requires fields. */
const metadata = process.env.DURABLE_CHAT_CONFORMANCE_METADATA;

describe.skipIf(!baseURL || !secretKey || !taskIdentifier)('production service', () => {
  defineConformanceSuite(() => ({
    baseURL: baseURL ?? '',
    secretKey: secretKey ?? '',
    taskIdentifier: taskIdentifier ?? '',
    options: {
      pingIntervalMs: 5_000,
      trimDelayMs: 60_000,
      metadata: metadata === undefined ? undefined : JSON.parse(metadata),
    },
  }));
});
