import {
  type DevServer,
  type DevServerOptions,
  echoAgent,
  startDevServer,
} from '../../../src/dev-server/index.js';
import type { ConformanceOptions, ConformanceTarget } from './conformance-target.js';

/** Starts a dev server on the echo agent and describes it as a conformance target with every capability. */
export async function startDevServerTarget(
  serverOptions: DevServerOptions = {},
  targetOptions: Partial<ConformanceOptions> = {},
): Promise<{ server: DevServer; target: ConformanceTarget }> {
  const server = await startDevServer({
    port: 0,
    agents: [echoAgent],
    pingIntervalMs: 200,
    trimDelayMs: 300,
    ...serverOptions,
  });
  const faults = server.faults;
  const target: ConformanceTarget = {
    baseURL: server.url,
    secretKey: server.secretKey,
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
      mintToken: (scopes) => server.app.context.tokens.mint('conformance', scopes),
      ...targetOptions,
    },
  };
  return { server, target };
}
