import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { launchBrowser, saveScreenshot, type TestBrowser } from '../browser/support/browser.js';
import { DEMO } from '../browser/support/demo-prompts.js';
import { ExamplePage, occurrences } from './support/example-page.js';
import { sessionInfo } from './support/nextjs-example.js';
import { startViteReactExample, type ViteReactExample } from './support/vite-react-example.js';

// examples/vite-react built with `vite build` from the packed package, served by its Node
// server (the chat route through `createNodeChatRouteHandler`, transcripts kept on the
// server with their history cursor) against `durable-chat dev`, driven in Debian's Chromium.

// The example shows replies as plain text (markdown unrendered): match what it shows.
const SHORT_REPLY = 'here. You said:';

let example: ViteReactExample;
let browser: TestBrowser;
const pages: ExamplePage[] = [];
/** `.out` length of a chat after the long reply ran to its end (set by the first test). */
let fullReplyOutLength: number | undefined;

beforeAll(async () => {
  example = await startViteReactExample();
  console.log(`[timing] vite-react build: ${example.buildSeconds.toFixed(1)} s`);
  browser = await launchBrowser();
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await example?.stop();
});

async function open(testName: string, path = '/', on: TestBrowser = browser): Promise<ExamplePage> {
  const page = await ExamplePage.open(on.context, `${example.url}${path}`);
  pages.push(page);
  onTestFailed(async () => {
    if (page.page.isClosed()) return;
    const file = await saveScreenshot(page.page, `vite-react-${testName}`);
    console.error(`screenshot: ${file}\nerrors: ${page.errors.join('\n')}\n${example.output()}`);
  });
  return page;
}

async function closePages(): Promise<void> {
  for (const page of pages.splice(0)) await page.page.close();
}

async function sendLongAndWaitMidReply(page: ExamplePage): Promise<void> {
  const repliesBefore = await page.assistantMessages.count();
  await page.send(DEMO.long.prompt);
  // The new reply, not an earlier one that is long enough already.
  await page.assistantMessages.nth(repliesBefore).waitFor();
  await page.waitForReplyLength(120);
  expect(await page.isStreamingWithText()).toBe(true);
}

/** The chat's turn ended on the dev server and `.out` no longer grows; returns its length. */
async function expectTurnEnded(chatId: string): Promise<number> {
  let info = await sessionInfo(example.devServer, chatId);
  for (let waited = 0; info.run?.state === 'streaming' && waited < 10_000; waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    info = await sessionInfo(example.devServer, chatId);
  }
  expect(info.run?.state).not.toBe('streaming');
  const settled = info.out.nextSeq;
  await new Promise((resolve) => setTimeout(resolve, 1500));
  expect((await sessionInfo(example.devServer, chatId)).out.nextSeq).toBe(settled);
  return settled;
}

async function texts(page: ExamplePage): Promise<string[]> {
  return page.page
    .locator('ol.messages > li')
    .evaluateAll((items) => items.map((item) => `${item.className}: ${item.textContent ?? ''}`));
}

describe('examples/vite-react in Chromium', () => {
  it('sends and streams through the Node chat route', async () => {
    await closePages();
    const page = await open('send');
    await page.send(DEMO.long.prompt);
    await page.waitForReplyLength(60);
    expect(await page.isStreamingWithText()).toBe(true);
    await page.waitForReplyContaining(DEMO.long.ending);
    await page.waitForIdle();
    expect(await page.assistantMessages.count()).toBe(1);
    expect(page.errors).toEqual([]);
    fullReplyOutLength = await expectTurnEnded(await page.chatId());
  });

  it('stop stops the agent: the turn ends on the dev server and no more chunks come', async () => {
    await closePages();
    const page = await open('stop');
    const chatId = await page.chatId();
    await sendLongAndWaitMidReply(page);
    await page.page.getByTestId('stop').click();
    await page.waitForIdle();
    const stoppedOutLength = await expectTurnEnded(chatId);
    expect(fullReplyOutLength).toBeGreaterThan(100);
    expect(stoppedOutLength).toBeLessThan((fullReplyOutLength ?? 0) / 2);
    const shown = await page.lastReply();
    expect(shown).not.toContain(DEMO.long.ending);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await page.lastReply()).toBe(shown);
    expect(page.errors).toEqual([]);
  });

  it('reload mid-reply: the reply resumes and completes exactly once', async () => {
    await closePages();
    const page = await open('reload');
    const chatId = await page.chatId();
    await sendLongAndWaitMidReply(page);
    await page.page.reload();
    await page.ready();
    expect(await page.chatId()).toBe(chatId);
    await page.waitForReplyContaining(DEMO.long.ending);
    await page.waitForIdle();
    expect(await page.userMessages.count()).toBe(1);
    expect(await page.assistantMessages.count()).toBe(1);
    const reply = await page.lastReply();
    expect(occurrences(reply, DEMO.long.opening)).toBe(1);
    expect(occurrences(reply, DEMO.long.ending)).toBe(1);
    expect(page.errors).toEqual([]);
  });

  it('history back after a reload: the earlier turns show, and the next turn follows them once', async () => {
    await closePages();
    const page = await open('history');
    await page.send('first: hello');
    await page.waitForReplyContaining(SHORT_REPLY);
    await page.waitForIdle();
    await page.send('second: hello again');
    await page.waitForReplyContaining('second: hello again');
    await page.waitForIdle();
    const before = await texts(page);
    expect(before).toHaveLength(4);

    await page.page.reload();
    await page.ready();
    await page.page.locator('ol.messages > li').nth(3).waitFor();
    expect(await texts(page)).toEqual(before);

    await page.send('third: once more');
    await page.waitForReplyContaining('third: once more');
    await page.waitForIdle();
    const after = await texts(page);
    expect(after.slice(0, 4)).toEqual(before);
    expect(after).toHaveLength(6);
    expect(page.errors).toEqual([]);
  });

  it('another browser with empty storage opens the chat mid-reply: history, then the reply once', async () => {
    await closePages();
    const owner = await open('other-device-owner');
    const chatId = await owner.chatId();
    await owner.send('an earlier turn');
    await owner.waitForReplyContaining(SHORT_REPLY);
    await owner.waitForIdle();
    await sendLongAndWaitMidReply(owner);
    // The owner closes its page mid-reply; a second browser (its own profile) opens the chat.
    await owner.page.close();
    pages.splice(pages.indexOf(owner), 1);
    const device = await launchBrowser();
    try {
      const other = await open('other-device', `/?chat=${encodeURIComponent(chatId)}`, device);
      await other.waitForReplyContaining(DEMO.long.ending);
      await other.waitForIdle();
      expect(await other.userMessages.count()).toBe(2);
      expect(await other.assistantMessages.count()).toBe(2);
      const shown = await texts(other);
      expect(shown[1]).toContain(SHORT_REPLY);
      const reply = await other.lastReply();
      expect(occurrences(reply, DEMO.long.opening)).toBe(1);
      expect(occurrences(reply, DEMO.long.ending)).toBe(1);
      expect(other.errors).toEqual([]);
    } finally {
      await closePages();
      await device.close();
    }
  });
});
