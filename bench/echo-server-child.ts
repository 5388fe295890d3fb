import { echoAgent, startDevServer } from 'durable-chat/dev-server';

/**
 * Child-process entry: durable-chat's own dev server with its echo agent, so the
 * protocol's server-side work runs on the real implementation but outside the client's
 * process. Answers `{type: 'ready', url, secretKey}` over IPC.
 */
const server = await startDevServer({ agents: [echoAgent] });
process.on('disconnect', () => {
  server.close().finally(() => process.exit(0));
});
process.send?.({ type: 'ready', url: server.url, secretKey: server.secretKey });
