import type { UIMessageChunk } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { type DevServer, defineAgent, echoAgent, startDevServer } from '../../src/dev-server/index.js';
import {
  createSession,
  readOut,
  replyText,
  sendText,
  turnCompletes,
  untilTurnCompletes,
} from './support/client.js';

let server: DevServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('bounded logs', () => {
  it('holds about one turn on .out and releases answered .in records, however long the chat', async () => {
    server = await startDevServer({ agents: [echoAgent], trimDelayMs: 0, logger: { warn() {} } });
    const created = await createSession(server, { externalId: 'bounded' });
    const token = created.body.publicAccessToken;
    let cursor: string | undefined;
    const sizes: number[] = [];
    for (let turn = 0; turn < 30; turn++) {
      await sendText(server, 'bounded', token, 'bounded', `turn ${turn}`);
      const read = await readOut(server, 'bounded', token, {
        lastEventId: cursor,
        until: untilTurnCompletes(1),
      });
      expect(replyText(read.records)).toBe(`Echo: turn ${turn}`);
      cursor = String(turnCompletes(read.records)[0]?.seqNum);
      sizes.push(server.inspect('bounded')?.out.records ?? -1);
    }
    const info = server.inspect('bounded');
    // Each echo turn writes 10 records plus a trim; the log keeps the previous turn-complete onwards.
    expect(Math.max(...sizes.slice(2))).toBeLessThanOrEqual(12);
    expect(info?.out.nextSeq).toBeGreaterThan(250);
    expect(info?.in.records).toBe(0);
    expect(info?.in.acknowledgedSeq).toBe(29);
  });
});

describe('pending messages', () => {
  it('injects messages sent mid-turn at the next step when the agent takes them', async () => {
    const seen: string[][] = [];
    const agent = defineAgent({
      id: 'steerable',
      run({ messages, takePendingMessages, signal }) {
        return (async function* (): AsyncGenerator<UIMessageChunk> {
          yield { type: 'start' };
          yield { type: 'start-step' };
          yield { type: 'text-start', id: 'a' };
          yield { type: 'text-delta', id: 'a', delta: 'step one.' };
          yield { type: 'text-end', id: 'a' };
          yield { type: 'finish-step' };
          // Wait for the steering message to land on .in, as a slow model step would.
          while (!signal.aborted) {
            const pending = takePendingMessages();
            if (pending.length > 0) {
              seen.push(pending.map((message) => message.id));
              break;
            }
            await new Promise((resolve) => setTimeout(resolve, 5));
          }
          yield { type: 'start-step' };
          yield { type: 'text-start', id: 'b' };
          yield { type: 'text-delta', id: 'b', delta: ` step two saw ${messages.length} messages.` };
          yield { type: 'text-end', id: 'b' };
          yield { type: 'finish-step' };
          yield { type: 'finish' };
        })();
      },
    });
    server = await startDevServer({ agents: [agent], logger: { warn() {} } });
    const created = await createSession(server, { externalId: 'steer', taskIdentifier: 'steerable' });
    const token = created.body.publicAccessToken;
    await sendText(server, 'steer', token, 'steer', 'go');
    await readOut(server, 'steer', token, { until: (records) => records.length >= 4 });
    const steering = await sendText(server, 'steer', token, 'steer', 'also this');
    const { seq } = (await steering.json()) as { seq: number };
    const read = await readOut(server, 'steer', token, { until: untilTurnCompletes(1) });
    expect(replyText(read.records)).toBe('step one. step two saw 2 messages.');
    expect(seen).toHaveLength(1);
    // One turn answered both: its turn-complete acknowledges the steering append.
    expect(turnCompletes(read.records)[0]?.sessionInEventId).toBe(seq);
    expect(server.inspect('steer')?.run?.turns).toBe(1);
  });
});
