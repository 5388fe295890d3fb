import { readPlaygroundEnv } from './playground-env.js';
import { startPlayground } from './start-playground.js';

const coldStart = (bootDelayMs: number | undefined) =>
  bootDelayMs === undefined || bootDelayMs === 0 ? '' : ` (runs boot in ${bootDelayMs} ms)`;

/** `npm run playground`: start everything, print one URL, stop cleanly on Ctrl-C. */
export async function main(): Promise<void> {
  const settings = readPlaygroundEnv(process.env);
  const playground = await startPlayground({
    ...settings,
    onPortTaken: (port) => console.log(`port ${port} is in use, trying ${port + 1}`),
  });
  const backend =
    settings.backend.kind === 'remote'
      ? `${settings.backend.baseURL} (task ${settings.backend.taskIdentifier})`
      : `the local dev server with the demo agent${coldStart(settings.backend.bootDelayMs)}`;
  console.log(`durable-chat playground, chats run on ${backend}`);
  console.log(`Playground: ${playground.url}`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping the playground`);
    playground.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error('playground: failed to stop cleanly', error);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}
