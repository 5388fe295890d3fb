#!/usr/bin/env node
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ValidationError } from '../errors/validation-error.js';
import { assertRecording, type SessionRecording } from '../protocol/recording.js';
import { demoAgent } from './agents/demo-agent.js';
import { echoAgent } from './agents/echo-agent.js';
import { loadAgents } from './load-agents.js';
import { replayRecording } from './replay/replay-recording.js';
import { resolveSecretKey } from './resolve-secret-key.js';
import { startDevServer } from './start-dev-server.js';

const USAGE = `Usage: durable-chat dev [--port N] [--host H] [--secret-key K] [--data-dir D] [--agents ./module.js]
                          [--boot-delay MS]
       durable-chat dev --replay recording.json [--port N] [--host H] [--speed X|max]

  --port        port to listen on (default 3030; 0 picks a free one)
  --host        interface to bind (default 127.0.0.1)
  --secret-key  secret API key (default: $DURABLE_CHAT_SECRET_KEY, else $TRIGGER_SECRET_KEY,
                else the key saved in the data folder, else a new random sk_dev_… saved there)
  --data-dir    folder that keeps sessions (.in, .out, run state, snapshots) across restarts,
                and the saved key (default .durable-chat)
  --agents      module whose exported agents are served (default: the demo and echo agents,
                and the demo agent for any other task id)
  --boot-delay  a simulated cold start: each new run waits MS before it boots (default 0)
  --replay      serve a recording (the devtools' export, recordSession) instead of sessions:
                the same client run against it meets what the recorded one met
  --speed       with --replay: 1 keeps the recorded timing (default), 2 twice as fast, max no waits`;

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'secret-key': { type: 'string' },
      'data-dir': { type: 'string' },
      agents: { type: 'string' },
      'boot-delay': { type: 'string' },
      replay: { type: 'string' },
      speed: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help === true || positionals[0] !== 'dev') {
    console.log(USAGE);
    if (values.help !== true) process.exitCode = 1;
    return;
  }
  const port = values.port === undefined ? 3030 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ValidationError({ field: '--port', message: `--port: not a port: ${values.port}` });
  }
  if (values.replay !== undefined) {
    await replay(values.replay, port, values.host ?? '127.0.0.1', values.speed);
    return;
  }
  const bootDelayMs = values['boot-delay'] === undefined ? 0 : Number(values['boot-delay']);
  if (!Number.isInteger(bootDelayMs) || bootDelayMs < 0) {
    throw new ValidationError({
      field: '--boot-delay',
      message: `--boot-delay: not a whole number of milliseconds: ${values['boot-delay']}`,
    });
  }
  const agents = values.agents === undefined ? [demoAgent, echoAgent] : await loadAgents(values.agents);
  // Without --agents the app under development names its own (production) task id; the demo
  // agent answering it beats a 404. With --agents the user chose the ids: unknown ones fail.
  const defaultAgent = values.agents === undefined ? demoAgent : undefined;
  const dataDir = resolve(values['data-dir'] ?? '.durable-chat');
  const key = await resolveSecretKey({ flag: values['secret-key'], env: process.env, dataDir });
  const server = await startDevServer({
    port,
    host: values.host ?? '127.0.0.1',
    secretKey: key.secretKey,
    dataDir,
    agents,
    defaultAgent,
    bootDelayMs,
  });
  console.log(`durable-chat dev server listening on ${server.url}`);
  console.log(`  base URL:   ${server.url}`);
  // A key the user supplied (possibly a real one, from the shell) is never echoed in full: it
  // is already where the app reads it. The dev server's own key is shown, to be copied.
  const shown = key.supplied ? maskKey(server.secretKey) : server.secretKey;
  console.log(`  secret key: ${shown} (${key.source})`);
  const kept = server.app.context.sessions.size;
  console.log(`  data:       ${dataDir} (${kept} session${kept === 1 ? '' : 's'} kept from earlier runs)`);
  const otherIds = defaultAgent === undefined ? '' : `; any other task id: ${defaultAgent.id}`;
  console.log(`  agents:     ${agents.map((agent) => agent.id).join(', ')}${otherIds}`);
  stopOnSignals(server);
}

async function replay(
  file: string,
  port: number,
  host: string,
  speedFlag: string | undefined,
): Promise<void> {
  const speed =
    speedFlag === undefined ? 1 : speedFlag === 'max' ? Number.POSITIVE_INFINITY : Number(speedFlag);
  if (!(speed > 0)) {
    throw new ValidationError({
      field: '--speed',
      message: `--speed: not a number above 0 (or max): ${speedFlag}`,
    });
  }
  const path = resolve(file);
  const recording = await readRecording(path);
  const server = await replayRecording(recording, { port, host, speed });
  console.log(`durable-chat dev server replaying ${path}`);
  console.log(`  base URL:   ${server.url}`);
  console.log(`  chat:       ${recording.chatId} (${recording.exchanges.length} requests recorded)`);
  console.log('  secret key: any (a replay checks no key or token)');
  stopOnSignals(server);
}

async function readRecording(path: string): Promise<SessionRecording> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ValidationError({
      field: '--replay',
      message: `--replay: cannot read ${path}: ${String(error)}`,
    });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
    assertRecording(parsed);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new ValidationError({ field: '--replay', message: `--replay: ${path} is not a recording: ${why}` });
  }
  return parsed;
}

function stopOnSignals(server: { close(): Promise<void> }): void {
  const stop = () => {
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error('durable-chat: closing failed', error);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(`durable-chat: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});

function maskKey(key: string): string {
  return key.length <= 8 ? '…' : `${key.slice(0, 3)}…${key.slice(-4)}`;
}
