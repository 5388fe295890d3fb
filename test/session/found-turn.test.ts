import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { memoryPersistence, type PersistedChatRecord } from '../../src/client/persistence.js';
import { ChatSessionHandle } from '../../src/session/chat-session-handle.js';

// A page that loads while a turn is live shows that turn whatever happens next: its message at
// once, and its reply even when the resume reaches the chat only after the turn ended (the owner's
// final reply, announced to the tabs, is added after the message). Seen in examples/nextjs: a tab
// reloaded during a tool-approval request ended without the user's message.
const chatId = 'found-turn';
const user: UIMessage = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hello' }] };
const reply: UIMessage = { id: 'a1', role: 'assistant', parts: [{ type: 'text', text: 'hi there' }] };
const earlier: UIMessage = { id: 'u0', role: 'user', parts: [{ type: 'text', text: 'earlier' }] };

function handleWith(record: Partial<PersistedChatRecord>) {
  const stored = {
    version: 1,
    chatId,
    sessionId: 'session_found',
    lastEventId: 4,
    turnStored: true,
    turnStartCursor: 4,
    closed: false,
    closedReason: null,
    ...record,
  } as PersistedChatRecord;
  const handle = new ChatSessionHandle({
    chatId,
    baseURL: 'http://127.0.0.1:9',
    taskIdentifier: 'echo',
    startSession: () => Promise.reject(new Error('no request is made here')),
    persistence: memoryPersistence(new Map([[chatId, stored]])),
    tabs: false,
    environment: { warn: () => {} },
  });
  const shown: UIMessage[] = [];
  handle.resumeMessageHandler = (message) => shown.push(message);
  return { handle, shown };
}

const loaded = async (handle: ChatSessionHandle) => {
  await handle.client.ready();
  await new Promise((resolve) => setTimeout(resolve, 0));
};

describe('the live turn a chat loads with', () => {
  it('shows its message at load, and adds the owner’s final reply after it when no copy is shown', async () => {
    const { handle, shown } = handleWith({ turnLive: true, turnMessage: JSON.stringify(user) });
    const detach = handle.attach();
    await loaded(handle);
    expect(shown).toEqual([user]);
    expect(handle.withRemoteFinal([earlier, user], reply)).toEqual([earlier, user, reply]);
    // A copy shown (the resume came in time) is replaced by id; nothing is added twice.
    const partial = { ...reply, parts: [{ type: 'text' as const, text: 'hi' }] };
    expect(handle.withRemoteFinal([user, partial], reply)).toEqual([user, reply]);
    // The chat moved on from that message: another tab's reply of no shown turn is left out.
    const unrelated = [user, { ...earlier, id: 'u2' }];
    expect(handle.withRemoteFinal(unrelated, reply)).toBe(unrelated);
    detach();
  });

  it('adds nothing when the chat loaded with no live turn', async () => {
    const { handle, shown } = handleWith({ turnLive: false, turnMessage: JSON.stringify(user) });
    const detach = handle.attach();
    await loaded(handle);
    expect(shown).toEqual([]);
    const messages = [user];
    expect(handle.withRemoteFinal(messages, reply)).toBe(messages);
    detach();
  });
});
