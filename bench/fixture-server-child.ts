import { type ServedTurnSpec, startFixtureServer } from './fixture-server.js';

/**
 * Child-process entry of the fixture server. The parent passes the turns in
 * `BENCH_FIXTURE_SPECS` (JSON) and
 * the added delay per response in `BENCH_FIXTURE_DELAY_MS` (ms, default 0) and gets `{type: 'ready', url}` over IPC; the server dies
 * with its parent.
 */
const specs = JSON.parse(process.env.BENCH_FIXTURE_SPECS ?? '[]') as ServedTurnSpec[];
const server = await startFixtureServer(specs, {
  responseDelayMs: Number(process.env.BENCH_FIXTURE_DELAY_MS ?? 0),
});
process.on('disconnect', () => {
  server.close().finally(() => process.exit(0));
});
process.send?.({ type: 'ready', url: server.url });
