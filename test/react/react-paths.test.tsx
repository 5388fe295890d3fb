// @vitest-environment happy-dom
// Issue 19: what React and Next.js apps do to a chat (clear an error, pass options inline,
// navigate in a transition, leave and come back), on both React paths, with default options.
import { waitFor as waitForDom } from '@testing-library/react';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevServer } from '../../src/dev-server/index.js';
import type { UseDurableChatOptions } from '../../src/react/use-durable-chat.js';
import { chatOptions, mountChat, nextChatId, startEchoServer } from './support/harness.js';
import { mountPlainChat, sessionOptions } from './support/plain-harness.js';

let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer();
});
afterAll(async () => {
  await server.close();
});

/** `chatOptions` with the library's default retry and timeouts. */
function durableOptions(chatId: string, overrides: Partial<UseDurableChatOptions> = {}): UseDurableChatOptions {
  const { retry: _shortened, ...options } = chatOptions(server, chatId);
  return { ...options, ...overrides };
}

describe('item 5: clearError() clears the error status', () => {
  it('useChat + useChatSession: chat.clearError() takes session.status and statusLabel back to Ready', async () => {
    const page = mountPlainChat({ session: sessionOptions(server, nextChatId('plain-clear')) });
    void page.chat.sendMessage({ text: '/error now' });
    await waitForDom(() => expect(page.session.status.type).toBe('error'));
    expect(page.session.statusLabel).toMatch(/^Error: /);
    page.chat.clearError();
    await waitForDom(() => expect(page.chat.status).toBe('ready'));
    await waitForDom(() => expect(page.session.status).toEqual({ type: 'ready' }));
    expect(page.session.statusLabel).toBe('Ready');
    page.unmount();
  });

  it('useDurableChat: clearError() takes sessionStatus and statusLabel back to Ready', async () => {
    const chat = mountChat(durableOptions(nextChatId('durable-clear')));
    void chat.run((current) => current.sendMessage({ text: '/error now' }));
    await waitForDom(() => expect(chat.current.sessionStatus.type).toBe('error'));
    chat.current.clearError();
    await waitForDom(() => expect(chat.current.sessionStatus).toEqual({ type: 'ready' }));
    expect(chat.current.statusLabel).toBe('Ready');
    chat.unmount();
  });
});
