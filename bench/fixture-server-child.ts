import { type ServedTurnSpec, startFixtureServer } from './fixture-server.js';

/**
 * Child-process entry of the fixture server. The parent passes the turns in
 * `BENCH_FIXTURE_SPECS` (JSON) and gets `{type: 'ready', url}` over IPC; the server dies
 * with its parent.
 */
const specs = JSON.parse(process.env.BENCH_FIXTURE_SPECS ?? '[]') as ServedTurnSpec[];
const server = await startFixtureServer(specs);
process.on('disconnect', () => {
  server.close().finally(() => process.exit(0));
});
process.send?.({ type: 'ready', url: server.url });
