import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevServer } from '../../src/dev-server/index.js';
import { DevtoolsModel } from '../../src/devtools/devtools-model.js';
import { runConversation, SCRIPT } from '../transport/support/conversation.js';
import { startEchoServer } from '../transport/support/dev-server-fixture.js';

let server: DevServer;
beforeAll(async () => {
  // Trims at once, so the trim command follows each turn-complete on the same read.
  server = await startEchoServer({ trimDelayMs: 0 });
});
afterAll(async () => {
  await server.close();
});

describe('DevtoolsModel (the panel without React)', () => {
  it("tells a chat's life on its timeline: appends, reads and how they ended, turn-completes, trims, a drop and its wait", async () => {
    const model = new DevtoolsModel({ updateEveryMs: 10 });
    const stop = model.start();
    try {
      const chatId = `model-${Date.now()}`;
      const result = await runConversation(server, chatId, {
        script: SCRIPT,
        beforeTurn: (turn) => {
          server.faults.reset();
          if (turn === 1) server.faults.dropOutAfter(2);
        },
      });
      server.faults.reset();
      expect(result.errors).toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const chat = model.getSnapshot().chats.find((candidate) => candidate.chatId === chatId);
      expect(chat).toBeDefined();
      const lines = chat?.timeline.map((entry) => `${entry.kind} ${entry.text}`) ?? [];
      const has = (pattern: RegExp) =>
        expect(
          lines.some((line) => pattern.test(line)),
          String(pattern),
        ).toBe(true);
      has(/^token startSession: \S+ \(new\)/);
      has(/^append append message \(submit-message\): \d+ B, part [0-9a-f]{8}…$/);
      has(/^append append answered 200 after \d+ ms/);
      has(/^append message stored, \.in seq 0/);
      has(/^read read \.out from/);
      has(/^turn turn-complete at seq \d+/);
      has(/^read trim at seq \d+/);
      has(/^error read \.out dropped: up to seq \d+/);
      has(/^wait reconnecting \(drop\), attempt 1/);
      has(/^read resumed after/);
      has(/^read read \.out closed by the client/);
      // The chat's state, never a token.
      expect(chat?.cursor).toBe(
        result.events.filter((event) => event.type === 'turn-completed').at(-1)?.seqNum,
      );
      expect(chat?.tokenExpiresAt).toBeGreaterThan(Date.now());
      expect(JSON.stringify(model.getSnapshot())).not.toMatch(/eyJ[A-Za-z0-9_-]+\.eyJ/);
    } finally {
      stop();
    }
    expect(model.getSnapshot().chats).toEqual([]);
  });

  it('an unplanned moment: opened mid-reply, it joins the chat, the reply ends untouched, and the next turn is recorded', async () => {
    const chatId = `model-mid-${Date.now()}`;
    const model = new DevtoolsModel({ updateEveryMs: 10 });
    let stop = () => {};
    try {
      const result = await runConversation(server, chatId, {
        transport: { clientData: { delayMs: 15 } },
        beforeTurn: (turn) => {
          // The first reply is streaming when the panel opens (its `.out` read already open).
          if (turn === 0) setTimeout(() => (stop = model.start()), 60);
        },
      });
      expect(result.errors).toEqual([]);
      expect(result.transcript).toEqual([
        'user: first message to echo back',
        'assistant: Echo: first message to echo back first message to echo back',
        'user: second, shorter one',
        'assistant: Echo: second, shorter one',
      ]);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const chat = model.getSnapshot().chats.find((candidate) => candidate.chatId === chatId);
      const lines = chat?.timeline.map((entry) => entry.text) ?? [];
      // Both turn-completes (the first from the read it did not see open), and the second append.
      expect(lines.filter((line) => line.startsWith('turn-complete at seq'))).toHaveLength(2);
      expect(lines.filter((line) => line.startsWith('append message'))).toHaveLength(1);
      const recording = model.exportRecording(chat?.key ?? -1);
      expect(recording?.exchanges.filter((exchange) => exchange.kind === 'append')).toHaveLength(1);
    } finally {
      stop();
    }
  });
});
