import type { BrowserContext, Page } from 'playwright-core';

/**
 * A timeline of what a page of the example did, printed when a test fails: the transcript as
 * it changed on screen, the messages its tabs exchanged (BroadcastChannel, by type and message
 * ids), its requests (method, path and status: no query, no headers, so no token), and the
 * chat records it wrote to localStorage (flags and cursor only). A rare failure in CI (one
 * run in dozens) leaves too little to go on from a screenshot alone.
 */
export async function traceEveryPage(context: BrowserContext): Promise<void> {
  await context.addInitScript(() => {
    const lines: string[] = [];
    (window as unknown as { __trace: string[] }).__trace = lines;
    const log = (line: string) => {
      if (lines.length < 2_000)
        lines.push(`${Math.round(performance.timeOrigin + performance.now()) % 1_000_000} ${line}`);
    };
    const brief = (data: unknown): string => {
      if (typeof data !== 'object' || data === null) return String(data);
      const { type, tabId, message, answers, order } = data as Record<string, unknown>;
      const id = (message as { id?: unknown } | undefined)?.id;
      return JSON.stringify({ type, tab: String(tabId).slice(0, 6), message: id, answers, order });
    };
    const post = BroadcastChannel.prototype.postMessage;
    BroadcastChannel.prototype.postMessage = function (this: BroadcastChannel, data: unknown) {
      log(`post ${brief(data)}`);
      return post.call(this, data);
    };
    // A listener of its own beside the app's (the app's stay as they are, so removing them works).
    const listened = new WeakSet<BroadcastChannel>();
    const listen = BroadcastChannel.prototype.addEventListener;
    BroadcastChannel.prototype.addEventListener = function (
      this: BroadcastChannel,
      ...args: Parameters<BroadcastChannel['addEventListener']>
    ) {
      if (args[0] === 'message' && !listened.has(this)) {
        listened.add(this);
        log('channel listening');
        listen.call(this, 'message', (event) => log(`heard ${brief((event as MessageEvent).data)}`));
      }
      return listen.apply(this, args);
    } as typeof BroadcastChannel.prototype.addEventListener;
    const setItem = Storage.prototype.setItem;
    Storage.prototype.setItem = function (this: Storage, key: string, value: string) {
      if (!key.startsWith('example-')) {
        try {
          const record = JSON.parse(value) as Record<string, unknown>;
          const { turnLive, lastEventId, turnStartCursor } = record;
          log(`record ${key.slice(-12)} ${JSON.stringify({ turnLive, lastEventId, turnStartCursor })}`);
        } catch {
          log(`record ${key.slice(-12)} (not JSON)`);
        }
      }
      return setItem.call(this, key, value);
    };
    const fetchBefore = window.fetch;
    window.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = new URL(input instanceof Request ? input.url : String(input), location.href);
      const what = `${init?.method ?? (input instanceof Request ? input.method : 'GET')} ${url.pathname.slice(-40)}`;
      log(`fetch ${what}`);
      try {
        const response = await fetchBefore(input, init);
        log(`fetched ${response.status} ${what}`);
        return response;
      } catch (error) {
        log(`fetch failed ${what}: ${String(error).slice(0, 80)}`);
        throw error;
      }
    };
    let shown = '';
    const observe = () =>
      new MutationObserver(() => {
        const items = [...document.querySelectorAll('ol.messages > li')].map((item) => {
          const tools = [...item.querySelectorAll('[data-testid="tool-part"]')].map((part) =>
            part.getAttribute('data-state'),
          );
          return `${item.className}:${(item.querySelector('p.text')?.textContent ?? '').slice(0, 24)}${tools.length > 0 ? `[${tools.join(',')}]` : ''}`;
        });
        const status = document.querySelector('[data-testid="session-status"]')?.textContent ?? '';
        const now = `${status} ${JSON.stringify(items)}`;
        if (now !== shown) {
          shown = now;
          log(`shows ${now}`);
        }
      }).observe(document, { subtree: true, childList: true, characterData: true });
    if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', observe);
    else observe();
  });
}

/** The page's timeline (see `traceEveryPage`); empty when the page is gone. */
export async function pageTrace(page: Page): Promise<string> {
  if (page.isClosed()) return '(closed)';
  const lines = await page
    .evaluate(() => (window as unknown as { __trace?: string[] }).__trace ?? [])
    .catch((error: unknown) => [`(no trace: ${String(error)})`]);
  return lines.join('\n');
}
