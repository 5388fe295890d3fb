import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { UIMessage } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryPersistence } from '../../src/client/persistence.js';
import type { SessionInfo } from '../../src/dev-server/index.js';
import type { OutRecord } from '../../src/protocol/types.js';
import { SessionChatTransport } from '../../src/transport/session-chat-transport.js';
import { TestChat, transcript, waitFor } from '../transport/support/dev-server-fixture.js';
import { type RunningCli, startCli, stopCli } from './support/cli.js';
import { append, readOut, type Target } from './support/client.js';

/**
 * An agent whose reply names the history it was given (so a continuation that lost the
 * chat's history would say so), streamed slowly for "two" so the test can kill the server
 * in the middle of it.
 */
const AGENT_MODULE = `
export const slow = {
  id: 'slow',
  run({ messages, signal }) {
    const last = messages[messages.length - 1];
    const text = last.parts.filter((part) => part.type === 'text').map((part) => part.text).join('');
    const roles = messages.map((message) => message.role[0]).join('');
    const words = ['reply to ' + text + ' after ' + roles + ':'];
    for (let index = 0; index < 40; index++) words.push(' w' + index);
    return (async function* () {
      yield { type: 'start' };
      yield { type: 'text-start', id: 't' };
      for (const word of words) {
        if (signal.aborted) return;
        yield { type: 'text-delta', id: 't', delta: word };
        if (text === 'two') await new Promise((resolve) => setTimeout(resolve, 100));
      }
      yield { type: 'text-end', id: 't' };
      yield { type: 'finish' };
    })();
  },
};
`;

const CHAT_ID = 'chat-across-a-kill';

let dir: string | undefined;
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) await stopCli(child);
  if (dir !== undefined) await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  dir = undefined;
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function start(args: string[]): Promise<RunningCli> {
  const cli = await startCli(args);
  children.push(cli.process);
  return cli;
}

function kill(cli: RunningCli): Promise<void> {
  const exited = new Promise<void>((resolve) => cli.process.once('exit', () => resolve()));
  cli.process.kill('SIGKILL');
  return exited;
}

/** What an app's route does: create (or return) the session with the secret key. */
function startSessionOn(target: Target) {
  // The route decides the task; this test's stands in for it.
  return async ({ chatId, taskIdentifier = 'slow' }: { chatId: string; taskIdentifier?: string }) => {
    const response = await fetch(`${target.url}/api/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${target.secretKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        type: 'chat.agent',
        taskIdentifier,
        externalId: chatId,
        triggerConfig: { basePayload: { chatId, trigger: 'preload' } },
      }),
    });
    const body = (await response.json()) as {
      publicAccessToken: string;
      id: string;
      currentRunId: string | null;
    };
    if (!response.ok) throw new Error(`create failed with ${response.status}`);
    return { publicAccessToken: body.publicAccessToken, sessionId: body.id, currentRunId: body.currentRunId };
  };
}

interface AckedAppend {
  partId: string;
  body: string;
  seq: number;
}

/** The real fetch, noting every append the server acknowledged (its part id, body and seq). */
function ackRecordingFetch(acked: AckedAppend[]): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (url.endsWith('/in/append') && response.ok) {
      const answer = (await response.clone().json()) as { seq?: number };
      const partId = new Headers(init?.headers).get('x-part-id');
      if (partId !== null && typeof init?.body === 'string' && answer.seq !== undefined)
        acked.push({ partId, body: init.body, seq: answer.seq });
    }
    return response;
  };
}

function textOf(message: UIMessage | undefined): string {
  return (message?.parts ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('');
}

async function inspect(target: Target, sessionId: string): Promise<SessionInfo> {
  const response = await fetch(`${target.url}/__dev/sessions/${sessionId}`, {
    headers: { authorization: `Bearer ${target.secretKey}` },
  });
  return (await response.json()) as SessionInfo;
}

describe('durable-chat dev across a SIGKILL (issue 21 item 7)', () => {
  it('keeps every acknowledged .in/.out record, and the chat ends the cut turn as run-gone and then goes on', async () => {
    dir = await mkdtemp(join(tmpdir(), 'durable-chat-restart-'));
    const modulePath = join(dir, 'agents.mjs');
    await writeFile(modulePath, AGENT_MODULE);
    const port = await freePort();
    const args = ['dev', '--port', String(port), '--data-dir', join(dir, 'data'), '--agents', modulePath];
    const first = await start(args);
    const storage = memoryPersistence();
    const acked: AckedAppend[] = [];
    const errors: unknown[] = [];
    const transportFor = (target: Target, fetchImpl: typeof fetch = fetch) =>
      new SessionChatTransport({
        baseURL: target.url,
        taskIdentifier: 'slow',
        startSession: startSessionOn(target),
        persistence: storage,
        fetch: fetchImpl,
        environment: { warn: () => {} },
      });
    const chat = new TestChat({
      id: CHAT_ID,
      transport: transportFor(first, ackRecordingFetch(acked)),
      onError: (error) => errors.push(error),
    });
    await chat.sendMessage({ text: 'one' });
    expect(textOf(chat.messages[1])).toMatch(/^reply to one after u: w0/);

    // A reader of .out from 0, as a page would hold one: what it saw was acknowledged.
    const created = await startSessionOn(first)({ chatId: CHAT_ID, taskIdentifier: 'slow' });
    const token = created.publicAccessToken;
    const observed: OutRecord[] = [];
    const observing = readOut(first, CHAT_ID, token, {
      timeoutSeconds: 60,
      until: (records) => {
        observed.splice(0, observed.length, ...records);
        return false;
      },
    });
    const sending = chat.sendMessage({ text: 'two' });
    await waitFor(() => textOf(chat.messages[3]).includes(' w5'), 10_000, 'the second reply mid-stream');
    await kill(first);
    expect((await observing).ended).toBe('dropped');
    const seenBeforeKill = observed.length;
    expect(seenBeforeKill).toBeGreaterThan(10);
    expect(acked.map((entry) => entry.seq)).toEqual([0, 1]);

    const second = await start(args);
    expect(second.secretKey).toBe(first.secretKey); // the saved key: the app's route still works

    // The token minted before the kill still reads, and every record seen is there, unchanged.
    const after = await readOut(second, CHAT_ID, token, {
      until: (records) => records.length >= seenBeforeKill,
    });
    expect(after.status).toBe(200);
    expect(after.records.slice(0, seenBeforeKill)).toEqual(observed);
    expect(second.output).toContain('(1 session kept from earlier runs)');
    // Every acknowledged append is stored under its part id and seq: sent again, it is
    // recognised (same seq), not stored a second time.
    const before = await inspect(second, created.sessionId);
    expect(before.run).toBeNull(); // no run survives its process
    expect(before.row.currentRunId).toBeNull();
    for (const entry of acked) {
      const answer = await append(second, CHAT_ID, token, entry.body, entry.partId);
      expect(await answer.json()).toEqual({ ok: true, seq: entry.seq });
    }
    expect((await inspect(second, created.sessionId)).in.nextSeq).toBe(before.in.nextSeq);

    // The cut turn ends as a crashed run's does: RUN_GONE, the partial reply kept.
    await sending;
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'RUN_GONE' });
    expect(textOf(chat.messages[3])).toMatch(/^reply to two after uau: w0 w1 w2 w3 w4 w5/);

    // A reload: a new transport on the same stored record, the saved messages, a new turn.
    const reloaded = new TestChat({
      id: CHAT_ID,
      messages: chat.messages,
      transport: transportFor(second),
      onError: (error) => errors.push(error),
    });
    await reloaded.sendMessage({ text: 'three' });
    expect(errors).toHaveLength(1);
    // The continuation run rebuilt the history: both earlier turns, the cut reply spliced in.
    expect(textOf(reloaded.messages[5])).toMatch(/^reply to three after uauau: w0 w1/);
    expect(transcript(reloaded.messages).map((line) => line.split(':')[0])).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
  }, 60_000);
});
