import { copyFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { replayRecording } from '../../src/dev-server/index.js';
import { assertRecording } from '../../src/protocol/recording.js';
import { launchBrowser, saveScreenshot } from './support/browser.js';
import { ChatPage } from './support/chat-page.js';
import { DEMO } from './support/demo-prompts.js';
import { usePlayground } from './support/fixture.js';
import { repoRoot, startPlaygroundProcess } from './support/playground-process.js';

/**
 * The devtools panel in the playground, in Chromium: open it, watch a turn, export the
 * chat's recording, then replay it (`replayRecording`, the playground pointed at it as at any
 * session service) and see the same reply again.
 */
describe('playground: the devtools panel, a recording and its replay, in Chromium', () => {
  const playground = usePlayground();
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('shows the chat live, exports its recording, and the replay shows the same reply', async () => {
    const chat = await playground.openChat('devtools-panel');
    const { page } = chat;
    await page.getByTestId('durable-chat-devtools-toggle').click();
    const panel = page.getByTestId('durable-chat-devtools');
    await panel.waitFor();

    await chat.send(DEMO.markdown.prompt);
    await chat.waitForIdle();
    await chat.waitForReplyContaining(DEMO.markdown.contains);
    const reply = await chat.lastReply();

    // The chat is listed, and its timeline tells the turn.
    const chatId = await page
      .locator('[data-testid="chat-list"] button[aria-current="true"]')
      .getAttribute('data-chat-id');
    const item = panel.locator(`[data-testid="durable-chat-devtools-chat"][data-chat-id="${chatId}"]`);
    await item.click();
    const timeline = panel.getByTestId('durable-chat-devtools-timeline');
    await timeline.getByText(/turn-complete at seq \d+/).waitFor();
    expect(await timeline.textContent()).toMatch(/append message \(submit-message\): \d+ B/);
    expect(await panel.locator('[data-field="status"]').textContent()).toBe('Ready');
    const cursor = Number(await panel.locator('[data-field="cursor"]').textContent());
    expect(cursor).toBeGreaterThan(0);
    const shot = await saveScreenshot(page, 'devtools-panel', { fullPage: false });
    // `UPDATE_DOCS_SCREENSHOT=1` refreshes the README's picture of the panel.
    if (process.env.UPDATE_DOCS_SCREENSHOT === '1')
      await copyFile(shot, join(repoRoot, 'docs', 'devtools.png'));

    // One click: the recording downloads, redacted.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      panel.getByTestId('durable-chat-devtools-export').click(),
    ]);
    const path = await download.path();
    const text = await readFile(path, 'utf8');
    const recording: unknown = JSON.parse(text);
    assertRecording(recording);
    expect(recording.chatId).toBe(chatId);
    expect(text).not.toMatch(/eyJ[A-Za-z0-9_-]+\.eyJ/);
    expect(recording.exchanges.filter((exchange) => exchange.kind === 'append')).toHaveLength(1);

    // The replay: the playground against the recording, as against any session service.
    const replay = await replayRecording(recording, { logger: { warn: () => {} } });
    cleanups.push(() => replay.close());
    const replayed = await startPlaygroundProcess({
      DURABLE_CHAT_BASE_URL: replay.url,
      // A replay checks no key; the route still wants a well-formed one.
      DURABLE_CHAT_SECRET_KEY: 'sk_replay_unchecked',
      DURABLE_CHAT_TASK: 'demo',
    });
    cleanups.push(() => replayed.stop());
    const browser = await launchBrowser();
    cleanups.push(() => browser.close());
    const again = await ChatPage.open(browser.context, replayed.url);
    await again.newChat();
    await again.send(DEMO.markdown.prompt);
    await again.waitForIdle();
    await again.waitForReplyContaining(DEMO.markdown.contains);
    expect(await again.lastReply()).toBe(reply);
    expect(replay.unmatched).toEqual([]);
    expect(replay.served.append).toBe(1);
  });
});
