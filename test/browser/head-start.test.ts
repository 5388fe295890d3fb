import { describe, expect, it } from 'vitest';
import type { ChatPage } from './support/chat-page.js';
import { DEMO } from './support/demo-prompts.js';
import { usePlayground } from './support/fixture.js';

/** Every new run of the playground's dev server boots this long first, as a cold start. */
const BOOT_DELAY_MS = 2_000;

/** The meter's send → first reply text on screen, of the latest turn. */
async function firstTokenMs(chat: ChatPage): Promise<number> {
  const text = (await chat.page.getByTestId('metric-ttft').textContent()) ?? '';
  const match = /^(\d+) ms$/.exec(text);
  if (match === null) throw new Error(`no first-token time shown: "${text}"`);
  return Number(match[1]);
}

/** The head-start route's reply (playground/src/host/head-start-route.ts). */
const HEAD_START_REPLY = "This first reply streamed from the playground's own route";

describe('playground: head start for a new chat, in Chromium', () => {
  const playground = usePlayground({ BOOT_DELAY_MS: String(BOOT_DELAY_MS) });

  it("the first reply comes from the host's route (marked), the second from the agent, which took the first as its history", async () => {
    const chat = await playground.openChat('head-start');
    await chat.page.getByTestId('head-start-toggle').check();
    await chat.newChat();
    await chat.send(DEMO.markdown.prompt);
    await chat.waitForIdle();
    await chat.waitForReplyContaining(HEAD_START_REPLY);
    const badges = chat.page.locator('[data-testid="messages"] [data-testid="head-start-badge"]');
    expect(await badges.count()).toBe(1);
    // Not held up by the agent's cold start (the route's model pauses 150 ms).
    const headStartMs = await firstTokenMs(chat);
    console.log(
      `[head-start] send → first token with head start: ${headStartMs} ms (runs boot in ${BOOT_DELAY_MS} ms)`,
    );
    expect(headStartMs).toBeLessThan(BOOT_DELAY_MS);

    await chat.send(DEMO.markdown.prompt);
    await chat.waitForIdle();
    await chat.waitForReplyContaining(DEMO.markdown.contains);
    expect(await chat.userMessages.count()).toBe(2);
    expect(await chat.assistantMessages.count()).toBe(2);
    // Only the route's reply carries the mark; the agent saw three messages (the handover's two and the new one).
    expect(await badges.count()).toBe(1);
    expect(await chat.assistantMessages.first().getByTestId('head-start-badge').count()).toBe(1);
    const status = chat.assistantMessages.nth(1).locator(`[data-type="${DEMO.dataPartType}"]`);
    expect(JSON.parse((await status.locator('code').textContent()) ?? '{}')).toMatchObject({ messages: 3 });

    // A reload shows each reply once, the first still marked.
    await chat.page.reload();
    await chat.ready();
    await chat.waitForReplyContaining(DEMO.markdown.contains);
    expect(await chat.assistantMessages.count()).toBe(2);
    expect(await badges.count()).toBe(1);
  });

  it('a new chat without the toggle gets its first reply from the agent, unmarked', async () => {
    const chat = await playground.openChat('no-head-start');
    await chat.send(DEMO.markdown.prompt);
    await chat.waitForIdle();
    await chat.waitForReplyContaining(DEMO.markdown.contains);
    expect(await chat.page.getByTestId('head-start-badge').count()).toBe(0);
    // The agent answered once its run had booted.
    const coldMs = await firstTokenMs(chat);
    console.log(`[head-start] send → first token without head start: ${coldMs} ms`);
    expect(coldMs).toBeGreaterThanOrEqual(BOOT_DELAY_MS);
  });
});
