import type { BrowserContext, Locator, Page } from 'playwright-core';

/**
 * How often `waitForFunction` checks the page. Not Playwright's default (every animation
 * frame): headless Chromium runs a tab's animation frames only a few times a second while
 * another tab is in front, so a wait in a tab behind another one saw its condition up to a
 * second late.
 */
const POLL_MS = 50;

/** The example app as a test sees it: what a visitor can click and read. */
export class ExamplePage {
  /** `[chat error]` lines the app logged from useChat's onError, and uncaught page errors. */
  readonly errors: string[] = [];
  /** Which runtime answered each call of the chat route (`x-chat-route-runtime`). */
  readonly routeRuntimes: string[] = [];

  constructor(readonly page: Page) {
    page.on('console', (message) => {
      if (message.type() === 'error' && message.text().includes('[chat error]'))
        this.errors.push(message.text());
    });
    page.on('pageerror', (error) => this.errors.push(`page error: ${error.message}`));
    page.on('response', (response) => {
      if (!new URL(response.url()).pathname.startsWith('/api/chat-session')) return;
      this.routeRuntimes.push(response.headers()['x-chat-route-runtime'] ?? `none (${response.status()})`);
    });
  }

  static async open(context: BrowserContext, url: string): Promise<ExamplePage> {
    const example = new ExamplePage(await context.newPage());
    await example.page.goto(url);
    await example.ready();
    return example;
  }

  async ready(): Promise<void> {
    await this.page.getByTestId('composer').waitFor();
  }

  /** The chat shown now (its id is in `?chat=`). */
  async chatId(): Promise<string> {
    const id = await this.page.locator('main.chat').getAttribute('data-chat-id');
    if (id === null) throw new Error('no chat shown');
    return id;
  }

  async mountId(): Promise<string | null> {
    return this.page.locator('.app').getAttribute('data-mount-id');
  }

  async newChat(): Promise<string> {
    const before = await this.chatId();
    await this.page.getByTestId('new-chat').click();
    await this.page.waitForFunction(
      (previous) => document.querySelector('main.chat')?.getAttribute('data-chat-id') !== previous,
      before,
      { polling: POLL_MS },
    );
    return this.chatId();
  }

  async selectChat(id: string): Promise<void> {
    await this.page.locator(`[data-testid="chat-list"] button[data-chat-id="${id}"]`).click();
    await this.page.locator(`main.chat[data-chat-id="${id}"]`).waitFor();
  }

  async useRuntime(runtime: 'node' | 'edge'): Promise<void> {
    await this.page.getByTestId('runtime').selectOption(runtime);
  }

  async send(text: string): Promise<void> {
    await this.page.getByTestId('composer').fill(text);
    await this.page.getByTestId('composer').press('Enter');
  }

  get assistantMessages(): Locator {
    return this.page.getByTestId('message-assistant');
  }

  get userMessages(): Locator {
    return this.page.getByTestId('message-user');
  }

  /** The text of the last assistant message ('' when there is none). */
  async lastReply(): Promise<string> {
    const count = await this.assistantMessages.count();
    if (count === 0) return '';
    return (
      await this.assistantMessages
        .nth(count - 1)
        .locator('p.text')
        .allTextContents()
    ).join('\n');
  }

  async waitForReplyContaining(text: string, timeout = 60_000): Promise<void> {
    await this.page.waitForFunction(
      (needle) => {
        const messages = document.querySelectorAll('[data-testid="message-assistant"]');
        return messages[messages.length - 1]?.textContent?.includes(needle) === true;
      },
      text,
      { timeout, polling: POLL_MS },
    );
  }

  async waitForReplyLength(length: number, timeout = 30_000): Promise<void> {
    await this.page.waitForFunction(
      (minimum) => {
        const messages = document.querySelectorAll('[data-testid="message-assistant"]');
        return (messages[messages.length - 1]?.textContent?.length ?? 0) >= minimum;
      },
      length,
      { timeout, polling: POLL_MS },
    );
  }

  /** True while a reply streams: Stop is shown and the reply has text already. */
  async isStreamingWithText(): Promise<boolean> {
    return (await this.page.getByTestId('stop').isVisible()) && (await this.lastReply()).length > 0;
  }

  async waitForBusy(timeout = 15_000): Promise<void> {
    await this.page.getByTestId('stop').waitFor({ timeout });
  }

  async waitForIdle(timeout = 60_000): Promise<void> {
    await this.page.getByTestId('send').waitFor({ timeout });
  }

  /** Each message as `role: text`, tool parts as `[name state]`, in order. */
  async transcript(): Promise<string[]> {
    return this.page.locator('ol.messages > li').evaluateAll((items) =>
      items.map((item) => {
        const parts = [...item.querySelectorAll('p.text, [data-testid="tool-part"]')].map((part) =>
          part.matches('p.text')
            ? (part.textContent ?? '')
            : `[${part.querySelector('b')?.textContent ?? ''} ${part.getAttribute('data-state') ?? ''}]`,
        );
        return `${item.className}: ${parts.join('')}`;
      }),
    );
  }

  /** The transcript the app saved for `chatId` (its localStorage), in the form of `transcript()`, text only. */
  async savedTranscript(chatId: string): Promise<string[]> {
    return this.page.evaluate((id) => {
      const raw = window.localStorage.getItem(`example-transcript:${id}`);
      const saved = raw === null ? [] : (JSON.parse(raw) as unknown);
      type Saved = { role: string; parts: { type: string; text?: string }[] };
      const messages = (
        Array.isArray(saved) ? saved : ((saved as { messages?: Saved[] }).messages ?? [])
      ) as Saved[];
      return messages.map(
        (message) =>
          `${message.role}: ${message.parts
            .filter((part) => part.type === 'text')
            .map((part) => part.text ?? '')
            .join('')}`,
      );
    }, chatId);
  }

  async chatError(): Promise<string | null> {
    const alert = this.page.getByTestId('chat-error');
    return (await alert.count()) === 0 ? null : alert.textContent();
  }
}

/** How often `needle` occurs in `text`. */
export function occurrences(text: string, needle: string): number {
  return text.split(needle).length - 1;
}
