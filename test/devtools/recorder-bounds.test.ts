import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isInspected } from '../../src/client/inspection.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { recordSession } from '../../src/devtools/record-session.js';
import { runConversation, SCRIPT } from '../transport/support/conversation.js';
import { startEchoServer } from '../transport/support/dev-server-fixture.js';

let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer();
});
afterAll(async () => {
  await server.close();
});

const bodyChars = (recording: ReturnType<ReturnType<typeof recordSession>['stop']>) =>
  recording.exchanges.reduce(
    (sum, exchange) =>
      sum + (exchange.response?.frames.reduce((chars, frame) => chars + frame.text.length, 0) ?? 0),
    0,
  );

describe('a recording stays within its bounds', () => {
  it('keeps at most maxExchanges requests and maxBodyChars of bodies, the newest, and says it was truncated', async () => {
    const chatId = `bounded-${Date.now()}`;
    const recorder = recordSession(chatId, { maxExchanges: 3, maxBodyChars: 1_500, maxEntries: 10 });
    const result = await runConversation(server, chatId, { script: [...SCRIPT, ...SCRIPT] });
    expect(result.errors).toEqual([]);
    const recording = recorder.stop();
    expect(recording.truncated).toBe(true);
    expect(recording.exchanges.length).toBeLessThanOrEqual(3);
    expect(bodyChars(recording)).toBeLessThanOrEqual(1_500);
    expect(recording.events.length).toBeLessThanOrEqual(10);
    // The newest survive: the last turn's turn-complete is in the last read's body.
    const lastRead = recording.exchanges.filter((exchange) => exchange.kind === 'out').at(-1);
    expect(lastRead?.response?.frames.map((frame) => frame.text).join('')).toContain('turn-complete');
  });

  it('one long reply alone over the bound keeps its newest pieces (a piece is never cut)', async () => {
    const chatId = `bounded-long-${Date.now()}`;
    const recorder = recordSession(chatId, { maxBodyChars: 2_000 });
    await runConversation(server, chatId, {
      script: [{ text: 'a long one, repeated many times over', metadata: { repeat: 12, delayMs: 2 } }],
    });
    const recording = recorder.stop();
    const read = recording.exchanges.find(
      (exchange) => exchange.kind === 'out' && exchange.response?.truncated,
    );
    expect(read).toBeDefined();
    // Over the bound by at most the newest piece (a piece is never cut).
    const newest = read?.response?.frames.at(-1)?.text.length ?? 0;
    expect(bodyChars(recording)).toBeLessThanOrEqual(2_000 + newest);
    expect(read?.response?.frames.map((frame) => frame.text).join('')).toContain('turn-complete');
  });

  it('detaches from the page once every recorder stopped', () => {
    const first = recordSession('detach-a');
    const second = recordSession('detach-b');
    expect(isInspected()).toBe(true);
    first.stop();
    expect(isInspected()).toBe(true);
    second.stop();
    expect(isInspected()).toBe(false);
    expect(second.stop()).toBe(second.stop());
  });
});
