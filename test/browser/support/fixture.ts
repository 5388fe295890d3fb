import { afterAll, beforeAll, onTestFailed } from 'vitest';
import { launchBrowser, saveScreenshot, type TestBrowser } from './browser.js';
import { ChatPage } from './chat-page.js';
import { type PlaygroundProcess, startPlaygroundProcess } from './playground-process.js';

export interface PlaygroundFixture {
  readonly url: string;
  /** A fresh page on the playground, with a new chat selected. Screenshot kept on failure. */
  openChat(testName: string): Promise<ChatPage>;
}

/**
 * One playground process and one browser per test file; one page per test. A failing
 * test leaves a full-page screenshot in test-results/ and prints the host's output.
 */
export function usePlayground(env: Record<string, string> = {}): PlaygroundFixture {
  let playground: PlaygroundProcess | undefined;
  let browser: TestBrowser | undefined;
  // The previous test's page is closed when the next one opens (not at its end, so a
  // failure screenshot can still be taken), so no stale page keeps streams open.
  let previous: ChatPage | undefined;

  beforeAll(async () => {
    playground = await startPlaygroundProcess(env);
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await playground?.stop();
  });

  return {
    get url() {
      if (playground === undefined) throw new Error('the playground is not running');
      return playground.url;
    },
    async openChat(testName) {
      if (browser === undefined || playground === undefined) throw new Error('the fixture did not start');
      await previous?.page.close();
      const chat = await ChatPage.open(browser.context, playground.url);
      previous = chat;
      const host = playground;
      onTestFailed(async () => {
        const file = await saveScreenshot(chat.page, testName);
        console.error(`screenshot: ${file}\nplayground output:\n${host.output()}`);
      });
      await chat.newChat();
      return chat;
    },
  };
}
