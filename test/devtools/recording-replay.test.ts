import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../src/client/events.js';
import { type DevServer, replayRecording } from '../../src/dev-server/index.js';
import { recordSession } from '../../src/devtools/record-session.js';
import type { SessionRecording } from '../../src/protocol/recording.js';
import { CLI, runCli } from '../dev-server/support/cli.js';
import { type ConversationResult, runConversation, SCRIPT } from '../transport/support/conversation.js';
import { quietLogger, startEchoServer, startSessionVia } from '../transport/support/dev-server-fixture.js';

/**
 * A run under faults (a dropped `.out`, expired tokens answered 401, a trimmed cursor) is
 * recorded, then the same client run against `replayRecording` of it: same messages, same
 * events, nothing beyond the recording asked, and no token anywhere in the recording.
 */
const SCRIPT_4 = [...SCRIPT, ...SCRIPT];
let server: DevServer;

beforeAll(async () => {
  // Trims at once: a cursor rewound to 0 meets a trimmed `.out`.
  server = await startEchoServer({ trimDelayMs: 0 });
});

afterAll(async () => {
  await server.close();
});

/**
 * The events of each turn (up to and including its turn-complete), each reduced to what a
 * replay must reproduce (no timings, no random delays), sorted: the append and the `.out`
 * read run side by side, so which of their events comes first within a turn is a race on
 * any server, recorded or not.
 */
function comparable(events: SessionEvent[]): string[][] {
  const turns: string[][] = [[]];
  for (const event of events) {
    turns[turns.length - 1]?.push(describeEvent(event));
    if (event.type === 'turn-completed') turns.push([]);
  }
  return turns.map((turn) => turn.sort());
}

function describeEvent(event: SessionEvent): string {
  switch (event.type) {
    case 'message-sent':
      return `${event.type} ${event.kind} attempts=${event.attempts} seq=${event.seq}`;
    case 'stream-connected':
    case 'stream-resumed':
      return `${event.type} cursor=${event.cursor}`;
    case 'stream-reconnecting':
      return `${event.type} attempt=${event.attempt} ${event.reason}`;
    case 'turn-completed':
      return `${event.type} seq=${event.seqNum} rejected=${event.rejected}`;
    case 'trimmed-cursor':
      return `${event.type} ${event.cursor}->${event.firstSeqNum}`;
    case 'token-refreshed':
      return `${event.type} ${event.source}`;
    case 'error':
      return `${event.type} ${event.error.code} fatal=${event.fatal}`;
    default:
      return event.type;
  }
}

/**
 * The recorded exchanges, one a line, with each body piece's time and record ids: a replay
 * that went differently is mostly a matter of which answer reached the client when.
 */
function describeExchanges(recording: SessionRecording): string {
  return recording.exchanges
    .map((e) => {
      const pieces = (e.response?.frames ?? []).map(
        (frame) => `${frame.at}:${(frame.text.match(/^id: ?\d+/gm) ?? []).join(',')}`,
      );
      return `${e.at} ${e.kind} ${e.request.headers['last-event-id'] ?? ''} → ${e.response?.at ?? e.failure?.at} ${e.response?.status ?? e.failure?.message} ${e.response?.end.type ?? ''}@${e.response?.end.at} ${pieces.join(' ')}`;
    })
    .join('\n');
}

function describeRuns(original: Recorded, events: SessionEvent[]): string {
  return `recorded:\n${describeExchanges(original.recording)}\nrecorded events: ${comparable(original.result.events).join(' | ')}\nreplayed events: ${comparable(events).join(' | ')}`;
}

interface Recorded {
  result: ConversationResult;
  recording: SessionRecording;
  tokens: Set<string>;
}

/** The conversation, with `faults` armed on the dev server before each turn (none on a replay). */
async function run(target: DevServer, chatId: string, armFaults: boolean): Promise<Recorded> {
  const recorder = recordSession(chatId);
  const tokens = new Set<string>();
  const start = startSessionVia(target);
  let unsubscribe = () => {};
  try {
    const result = await runConversation(target, chatId, {
      script: SCRIPT_4,
      turnTimeoutMs: 15_000,
      transport: {
        // The agent paces its reply, so each reply comes well after its append's answer, on
        // the recording and on the replay: a race of those two inside a few ms (which a replay
        // cannot promise to keep under load) decides nothing here.
        clientData: { delayMs: 20 },
        startSession: async (input) => {
          const answer = await start(input);
          tokens.add(answer.publicAccessToken);
          return answer;
        },
      },
      beforeTurn: (turn, transport) => {
        const client = transport.getClient(chatId);
        if (turn === 0) {
          unsubscribe = client.store.subscribe((state) => {
            if (state.token !== undefined) tokens.add(state.token);
          });
        }
        if (armFaults) {
          target.faults.reset();
          if (turn === 0) target.faults.dropOutAfter(3);
          if (turn === 1) {
            target.faults.expireTokens();
            target.faults.dropOutAfter(2);
          }
        }
        // This page's cursor rewound to the start: the first records are trimmed by now.
        if (turn === 3) client.store.setState({ lastEventId: 0 });
      },
    });
    return { result, recording: recorder.stop(), tokens };
  } finally {
    unsubscribe();
    recorder.stop();
    if (armFaults) target.faults.reset();
  }
}

describe('a recording of a faulty run', () => {
  let original: Recorded;

  beforeAll(async () => {
    original = await run(server, `recorded-${Date.now()}`, true);
  }, 60_000);

  it('saw the faults it is about', () => {
    const types = original.result.events.map((event) => event.type);
    expect(types).toContain('stream-reconnecting');
    expect(types).toContain('token-refreshed');
    expect(types).toContain('trimmed-cursor');
    expect(original.recording.exchanges.some((exchange) => exchange.response?.status === 401)).toBe(true);
    expect(original.recording.exchanges.some((exchange) => exchange.response?.end.type === 'dropped')).toBe(
      true,
    );
    expect(original.result.errors).toEqual([]);
  });

  it('holds no token: every one is a placeholder, with what it said about itself', () => {
    const text = JSON.stringify(original.recording);
    expect(original.tokens.size).toBeGreaterThan(1);
    for (const token of original.tokens) expect(text).not.toContain(token);
    // Not even a token's payload segment (its scopes and expiry are kept as data instead).
    for (const token of original.tokens) expect(text).not.toContain(token.split('.')[1]);
    expect(text).not.toMatch(/eyJ[A-Za-z0-9_-]+\.eyJ/);
    expect(text).toContain('[redacted-token:');
    expect(original.recording.tokens.every((token) => token.scopes !== undefined)).toBe(true);
  });

  it('replays to the same final messages and the same events, asking nothing beyond it', async () => {
    // Through JSON, as a recording attached to a bug report arrives.
    const recording = JSON.parse(JSON.stringify(original.recording)) as SessionRecording;
    const replay = await replayRecording(recording, { logger: quietLogger });
    try {
      const target = {
        url: replay.url,
        secretKey: 'not-checked',
        faults: server.faults,
      } as unknown as DevServer;
      const diagnosis = (events: SessionEvent[]) =>
        `served ${JSON.stringify(replay.served)} unmatched ${JSON.stringify(replay.unmatched)}\n${describeRuns(original, events)}`;
      const again = await run(target, original.recording.chatId, false).catch((error: unknown) => {
        throw new Error(`${String(error)}\n${diagnosis([])}`);
      });
      expect(again.result.errors, diagnosis(again.result.events)).toEqual([]);
      expect(again.result.transcript).toEqual(original.result.transcript);
      expect(again.result.chunks).toEqual(original.result.chunks);
      expect(comparable(again.result.events)).toEqual(comparable(original.result.events));
      expect(replay.unmatched).toEqual([]);
      expect(replay.served.out).toBe(original.recording.exchanges.filter((e) => e.kind === 'out').length);
      expect(replay.served.append).toBe(
        original.recording.exchanges.filter((e) => e.kind === 'append').length,
      );
    } finally {
      await replay.close();
    }
  }, 60_000);

  it('`durable-chat dev --replay file` serves it the same way (here twice as fast)', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'replay-cli-'));
    const file = join(folder, 'recording.json');
    await writeFile(file, JSON.stringify(original.recording, null, 2));
    const child = spawn(process.execPath, [CLI, 'dev', '--replay', file, '--port', '0', '--speed', '2'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let output = '';
        const onData = (data: Buffer) => {
          output += data.toString();
          const found = /base URL:\s+(\S+)/.exec(output)?.[1];
          if (found !== undefined) resolve(found);
        };
        child.stdout.on('data', onData);
        child.stderr.on('data', onData);
        child.once('exit', (code) => reject(new Error(`the CLI exited with ${code}: ${output}`)));
      });
      const target = { url, secretKey: 'not-checked', faults: server.faults } as unknown as DevServer;
      const again = await run(target, original.recording.chatId, false).catch((error: unknown) => {
        throw new Error(`${String(error)}\n${describeRuns(original, [])}`);
      });
      expect(again.result.errors, describeRuns(original, again.result.events)).toEqual([]);
      expect(again.result.transcript).toEqual(original.result.transcript);
    } finally {
      child.kill('SIGTERM');
    }
  }, 60_000);

  it('a file that is not a recording is refused with the reason', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'replay-cli-'));
    const file = join(folder, 'not-a-recording.json');
    await writeFile(file, JSON.stringify({ format: 'something-else' }));
    const { code, output } = await runCli(['dev', '--replay', file]);
    expect(code).toBe(1);
    expect(output).toContain('is not a recording: not a durable-chat recording');
  });
});
