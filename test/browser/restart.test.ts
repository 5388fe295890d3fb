import { afterAll, describe, expect, it, onTestFailed } from 'vitest';
import { launchBrowser, saveScreenshot, type TestBrowser } from './support/browser.js';
import { ChatPage } from './support/chat-page.js';
import { DEMO } from './support/demo-prompts.js';
import { type PlaygroundProcess, startPlaygroundProcess } from './support/playground-process.js';

describe('restarting the playground', () => {
  let browser: TestBrowser | undefined;
  let playground: PlaygroundProcess | undefined;

  afterAll(async () => {
    await browser?.close();
    await playground?.stop();
  });

  it('forgets the chats of the earlier run (their sessions lived in memory) and chats on', async () => {
    browser = await launchBrowser();
    playground = await startPlaygroundProcess();
    const chat = await ChatPage.open(browser.context, playground.url);
    onTestFailed(async () => {
      console.error(`screenshot: ${await saveScreenshot(chat.page, 'restart')}`);
    });
    await chat.send(DEMO.markdown.prompt);
    await chat.waitForIdle();
    await chat.newChat();

    // Same port, so the same origin and the same localStorage.
    const port = new URL(playground.url).port;
    await playground.stop();
    playground = await startPlaygroundProcess({ PORT: port });
    await chat.page.reload();
    await chat.ready();
    expect(await chat.page.getByTestId('event-log').textContent()).toContain(
      'chats of the earlier run were forgotten',
    );
    expect(await chat.page.locator('[data-testid="chat-list"] li').count()).toBe(1);
    expect(await chat.userMessages.count()).toBe(0);

    await chat.send(DEMO.markdown.prompt);
    await chat.waitForIdle();
    expect(await chat.lastReply()).toContain(DEMO.markdown.contains);
    expect(await chat.page.getByTestId('chat-error').count()).toBe(0);
  });
});
