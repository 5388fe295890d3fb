import { afterAll } from 'vitest';
import { type DevServer, echoAgent, startDevServer } from '../../src/dev-server/index.js';
import { defineConformanceSuite } from './define-conformance-suite.js';

let server: DevServer | undefined;

afterAll(async () => {
  await server?.close();
});

defineConformanceSuite(async () => {
  const started = await startDevServer({
    port: 0,
    agents: [echoAgent],
    pingIntervalMs: 200,
    trimDelayMs: 300,
  });
  server = started;
  const faults = started.faults;
  return {
    baseURL: started.url,
    secretKey: started.secretKey,
    taskIdentifier: echoAgent.id,
    options: {
      pingIntervalMs: 200,
      trimDelayMs: 300,
      supportsFaults: true,
      faults: {
        rateLimitNextAppend: () => faults.failAppends(1, 429),
        failNextAppend: () => faults.failAppends(1, 500),
        crashNextTurn: (sessionId) => faults.crashMidTurn({ afterChunks: 3, sessionId }),
        errorOnNextRead: () => faults.sendOutError('stream store restarting', { afterRecords: 1 }),
      },
      // echoAgent waits `delayMs` between 8-character deltas and repeats the text `repeat` times:
      // 'please answer slowly' x20 is ~54 deltas, ~2.7 s.
      slowTurnMetadata: { delayMs: 50, repeat: 20 },
      slowTurnMs: 2_500,
      invalidMetadata: { userId: 42 },
      action: { type: 'shout' },
      endRunText: '/end',
      toolApprovalText: '/approve ship it',
      toolOutputText: '/ask favourite colour?',
      upgradeText: '/upgrade',
      // The dev server's own minting (the production service mints with its own tools).
      mintToken: (scopes) => started.app.context.tokens.mint('conformance', scopes),
    },
  };
});
