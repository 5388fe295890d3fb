import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliProcess, startCli } from './support/cli-process.js';
import {
  chunkTypes,
  dataChunks,
  openChat,
  readOut,
  replyText,
  sendText,
  untilTurnCompletes,
} from './support/client.js';

// Agents that fail outside `run()`'s own promise: where a bug kills the process, not the turn.
const AGENTS = `
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
function agent(id, bad) {
  return {
    id,
    run() {
      return (async function* () {
        yield { type: 'start' };
        yield { type: 'text-start', id: 't' };
        yield { type: 'text-delta', id: 't', delta: 'before ' };
        await sleep(20);
        const next = bad();
        if (next !== undefined) yield next;
        await sleep(300);
        yield { type: 'text-delta', id: 't', delta: 'after' };
        yield { type: 'text-end', id: 't' };
        yield { type: 'finish' };
      })();
    },
  };
}
export const bigint = agent('bigint', () => ({ type: 'data-count', data: 1n }));
export const cycle = agent('cycle', () => {
  const data = {};
  data.self = data;
  return { type: 'data-cycle', data };
});
export const rejects = agent('rejects', () => {
  Promise.reject(new Error('nobody awaited this'));
  return undefined;
});
export const fine = agent('fine', () => undefined);
`;

let dir: string;
let cli: CliProcess;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'durable-chat-agent-failures-'));
  await writeFile(join(dir, 'agents.mjs'), AGENTS);
  cli = await startCli([
    'dev',
    '--port',
    '0',
    '--data-dir',
    join(dir, 'data'),
    '--agents',
    join(dir, 'agents.mjs'),
  ]);
}, 30_000);
afterAll(async () => {
  await cli?.stop();
  await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

async function turnOn(task: string) {
  const chat = await openChat(cli, `${task}-${Math.random().toString(36).slice(2)}`, task);
  expect((await sendText(cli, chat.chatId, chat.token, chat.chatId, 'hi')).status).toBe(200);
  return readOut(cli, chat.chatId, chat.token, { until: untilTurnCompletes(1) });
}

describe('the dev server (CLI) survives agents that fail outside run()', () => {
  it.each([
    ['bigint', /cannot serialise/],
    ['cycle', /cannot serialise/],
    ['rejects', /nobody awaited this/],
  ])('a %s agent fails its turn with an error record; the server keeps serving', async (task, reason) => {
    const read = await turnOn(task);
    expect(read.ended).toBe('until');
    const types = chunkTypes(read.records);
    expect(types).toContain('error');
    expect(types.at(-2)).toBe('control:turn-complete');
    const error = dataChunks(read.records).find((chunk) => chunk.type === 'error');
    expect(error).toMatchObject({ errorText: expect.stringMatching(reason) });
    expect(replyText(read.records)).toBe('before ');
    // Every other session is still served by the same process.
    expect(cli.child.exitCode).toBeNull();
    expect(replyText((await turnOn('fine')).records)).toBe('before after');
  });
});
