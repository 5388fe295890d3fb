// @vitest-environment happy-dom
// useChat aborts a resume still in flight when it starts another (a page's mount resume, then
// the live turn shown to it, as a tab reloaded during another tab's turn does). That abort is
// no stop: the reply goes on, and no stop record is appended (issue 19 item 10, where CI saw a
// reloaded tab append a third record).
import { waitFor as waitForDom } from '@testing-library/react';
import type { UIMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PersistedChatRecord } from '../../src/client/persistence.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { appendKinds, nextChatId, recordingFetch, startEchoServer } from './support/harness.js';
import { mountPlainChat, sessionOptions } from './support/plain-harness.js';

let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer();
});
afterAll(async () => {
  await server.close();
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const TEXT = 'a resume replaced by another';
const REPLY = `assistant: Echo: ${Array(8).fill(TEXT).join(' ')}`;

describe('useChat + useChatSession: a resume replaced by a newer one', () => {
  it('is no stop: the reply completes after a reload, and only the message was appended', async () => {
    const chatId = nextChatId('superseded-resume');
    const records = new Map<string, PersistedChatRecord>();
    const recorder = recordingFetch();
    const options = sessionOptions(server, chatId, records, {
      fetch: recorder.fetch,
      clientData: { delayMs: 20, repeat: 8 },
    });
    const first = mountPlainChat({ session: options, chat: { resume: true } });
    void first.chat.sendMessage({ text: TEXT });
    await waitForDom(() => expect((first.transcript()[1] ?? '').length).toBeGreaterThan(30));
    await first.session.sessionTransport.getClient(chatId).flushPersistence();
    const user = structuredClone(first.chat.messages[0]) as UIMessage;
    first.unmount();

    // The reload: useChat's own resume on mount, replaced by a second one once it streams.
    const second = mountPlainChat({ session: options, chat: { resume: true, messages: [user] } });
    await waitForDom(() => expect(second.chat.status).toBe('streaming'));
    void second.chat.resumeStream();
    await waitForDom(() => expect(second.transcript()).toEqual([`user: ${TEXT}`, REPLY]), { timeout: 5_000 });
    await waitForDom(() => expect(second.chat.status).toBe('ready'));
    await pause(200);
    expect(appendKinds(recorder.requests)).toEqual(['message']);
    expect(second.chat.error).toBeUndefined();
    second.unmount();
  });
});
