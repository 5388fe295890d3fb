// @vitest-environment happy-dom
import { waitFor as waitForDom } from '@testing-library/react';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevServer } from '../../src/dev-server/index.js';
import { DEFAULT_RENDER_THROTTLE_MS } from '../../src/react/use-durable-chat.js';
import { chatOptions, mountChat, nextChatId, startEchoServer } from './support/harness.js';

let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer();
});
afterAll(async () => {
  await server.close();
});

// 80 characters × 100 repeats (+ spaces and "Echo: ") ≈ 1,013 text deltas of 8 characters.
const TEXT = 'abcdefgh'.repeat(10);
const REPEAT = 100;

async function rendersFor(throttle: number | undefined) {
  const overrides = throttle === undefined ? {} : { experimental_throttle: throttle };
  const chat = mountChat(
    chatOptions(server, nextChatId('renders'), undefined, {
      ...overrides,
      clientData: { delayMs: 1, repeat: REPEAT },
    }),
  );
  const before = chat.renders;
  const started = Date.now();
  await chat.run((current) => current.sendMessage({ text: TEXT }));
  await waitForDom(() => expect(chat.current.status).toBe('ready'), { timeout: 10_000 });
  const reply = chat.transcript()[1] ?? '';
  const chunks = Math.ceil((reply.length - 'assistant: '.length) / 8);
  const result = { renders: chat.renders - before, chunks, ms: Date.now() - started, reply };
  chat.unmount();
  return result;
}

describe('renders per 1,000 chunks', () => {
  it('the default throttle keeps renders low; without it React renders far more often', async () => {
    const throttled = await rendersFor(undefined);
    const unthrottled = await rendersFor(0);
    const per1000 = (run: { renders: number; chunks: number }) =>
      Math.round((run.renders / run.chunks) * 1000);
    console.info(
      `[renders per 1,000 chunks] default ${DEFAULT_RENDER_THROTTLE_MS} ms: ${per1000(throttled)} (${throttled.renders} renders, ${throttled.chunks} chunks, ${throttled.ms} ms); ` +
        `no throttle: ${per1000(unthrottled)} (${unthrottled.renders} renders, ${unthrottled.chunks} chunks, ${unthrottled.ms} ms)`,
    );
    expect(throttled.reply).toBe(unthrottled.reply);
    expect(throttled.chunks).toBeGreaterThan(1_000);
    // At most one render per throttle window while streaming, plus the status changes around it.
    expect(throttled.renders).toBeLessThanOrEqual(Math.ceil(throttled.ms / DEFAULT_RENDER_THROTTLE_MS) + 15);
    expect(per1000(throttled)).toBeLessThan(150);
    expect(unthrottled.renders).toBeGreaterThan(throttled.renders);
  });
});
