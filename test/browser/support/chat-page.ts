import type { BrowserContext, Locator, Page } from 'playwright-core';

/** The playground as a test sees it: what a visitor can click and read. */
export class ChatPage {
  constructor(readonly page: Page) {}

  static async open(context: BrowserContext, url: string): Promise<ChatPage> {
    const page = await context.newPage();
    page.on('pageerror', (error) => console.error(`[page error] ${error.message}`));
    const chat = new ChatPage(page);
    await page.goto(url);
    await chat.ready();
    return chat;
  }

  /** The config has loaded and the composer is usable. */
  async ready(): Promise<void> {
    await this.page.locator('[data-testid="event-log"] li[data-kind="config"]').first().waitFor();
    await this.page.getByTestId('composer').waitFor();
  }

  async newChat(): Promise<string> {
    await this.page.getByTestId('new-chat').click();
    const active = this.page.locator('[data-testid="chat-list"] button[aria-current="true"]');
    const id = await active.getAttribute('data-chat-id');
    if (id === null) throw new Error('the new chat has no id');
    return id;
  }

  async selectChat(id: string): Promise<void> {
    await this.page.locator(`[data-testid="chat-list"] button[data-chat-id="${id}"]`).click();
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

  badge(): Locator {
    return this.page.getByTestId('status-badge');
  }

  /** The text parts of the last assistant message, joined ('' when there is none). */
  async lastReply(): Promise<string> {
    const count = await this.assistantMessages.count();
    if (count === 0) return '';
    const parts = await this.assistantMessages
      .nth(count - 1)
      .locator('.markdown')
      .allTextContents();
    return parts.join('\n');
  }

  /** Waits until the last reply contains `text`. */
  async waitForReplyContaining(text: string, timeout = 30_000): Promise<void> {
    await this.page.waitForFunction(
      (needle) => {
        const messages = document.querySelectorAll('[data-testid="message-assistant"]');
        const last = messages[messages.length - 1];
        return last?.textContent?.includes(needle) === true;
      },
      text,
      { timeout },
    );
  }

  /** Waits until the reply has at least `length` characters of text. */
  async waitForReplyLength(length: number, timeout = 30_000): Promise<void> {
    await this.page.waitForFunction(
      (minimum) => {
        const messages = document.querySelectorAll('[data-testid="message-assistant"] .markdown');
        const last = messages[messages.length - 1];
        return (last?.textContent?.length ?? 0) >= minimum;
      },
      length,
      { timeout },
    );
  }

  /** No turn is live: the Send button is back (Stop is shown while a turn streams). */
  async waitForIdle(timeout = 60_000): Promise<void> {
    await this.page.getByTestId('send').waitFor({ timeout });
  }

  async waitForBusy(timeout = 10_000): Promise<void> {
    await this.page.getByTestId('stop').waitFor({ timeout });
  }

  async waitForLog(kind: string, timeout = 30_000): Promise<void> {
    await this.page.locator(`[data-testid="event-log"] li[data-kind="${kind}"]`).first().waitFor({ timeout });
  }

  async logCount(kind: string): Promise<number> {
    return this.page.locator(`[data-testid="event-log"] li[data-kind="${kind}"]`).count();
  }

  async injectFault(name: 'drop-connection' | 'expire-token' | 'crash-run'): Promise<void> {
    const before = await this.logCount('fault');
    await this.page.getByTestId(`fault-${name}`).click();
    // One line for the request, one for the host's answer.
    await this.page.waitForFunction(
      (count) => document.querySelectorAll('[data-testid="event-log"] li[data-kind="fault"]').length >= count,
      before + 2,
    );
  }
}
