import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { memoryPersistence, type PersistedChatRecord } from '../../src/client/persistence.js';
import { ChatSessionHandle } from '../../src/session/chat-session-handle.js';
import { withRemoteFinal } from '../../src/session/follow-messages.js';

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

/** A `turn-finished` of a tab of an older version: no `answers`. */
const older = (message: UIMessage) => ({ message, answers: undefined });

describe('the live turn a chat loads with', () => {
  it('shows its message at load, and adds the owner’s final reply after it when no copy is shown', async () => {
    const { handle, shown } = handleWith({ turnLive: true, turnMessage: JSON.stringify(user) });
    const detach = handle.attach();
    await loaded(handle);
    expect(shown).toEqual([user]);
    expect(withRemoteFinal(handle, [earlier, user], older(reply))).toEqual([earlier, user, reply]);
    // A copy shown (the resume came in time) is replaced by id; nothing is added twice.
    const partial = { ...reply, parts: [{ type: 'text' as const, text: 'hi' }] };
    expect(withRemoteFinal(handle, [user, partial], older(reply))).toEqual([user, reply]);
    // The chat moved on from that message: another tab's reply of no shown turn is left out.
    const unrelated = [user, { ...earlier, id: 'u2' }];
    expect(withRemoteFinal(handle, unrelated, older(reply))).toBe(unrelated);
    detach();
  });

  it('adds nothing when the chat loaded with no live turn', async () => {
    const { handle, shown } = handleWith({ turnLive: false, turnMessage: JSON.stringify(user) });
    const detach = handle.attach();
    await loaded(handle);
    expect(shown).toEqual([]);
    const messages = [user];
    expect(withRemoteFinal(handle, messages, older(reply))).toBe(messages);
    detach();
  });
});

describe('how another tab’s turn ended (`answers` names the user message it answers)', () => {
  const ended = (message: UIMessage | undefined) => ({ message, answers: user.id });
  const otherId = { ...reply, id: 'generated-here' };
  it('replaces this tab’s copy, by id or as the reply after that message, or adds it', async () => {
    const { handle } = handleWith({ turnLive: false });
    await loaded(handle);
    const partial = { ...reply, parts: [{ type: 'text' as const, text: 'hi' }] };
    expect(withRemoteFinal(handle, [earlier, user, partial], ended(reply))).toEqual([earlier, user, reply]);
    // This tab's copy has an id of its own (an agent that sends no message id): still replaced.
    expect(withRemoteFinal(handle, [earlier, user, otherId], ended(reply))).toEqual([earlier, user, reply]);
    // This tab stopped its read before the reply (a stop from this tab that came too late).
    expect(withRemoteFinal(handle, [earlier, user], ended(reply))).toEqual([earlier, user, reply]);
  });

  it('removes this tab’s copy when the owner shows no reply (it stopped before the first chunk)', async () => {
    const { handle } = handleWith({ turnLive: false });
    await loaded(handle);
    expect(withRemoteFinal(handle, [earlier, user, reply], ended(undefined))).toEqual([earlier, user]);
    const same = [earlier, user];
    expect(withRemoteFinal(handle, same, ended(undefined))).toBe(same);
  });

  it('waits while that turn is not shown here, and leaves a chat that moved on as it is', async () => {
    const { handle } = handleWith({ turnLive: false });
    await loaded(handle);
    expect(withRemoteFinal(handle, [earlier], ended(reply))).toBeUndefined();
    expect(withRemoteFinal(handle, [earlier], ended(undefined))).toBeUndefined();
    const movedOn = [user, reply, { ...earlier, id: 'u3' }];
    expect(withRemoteFinal(handle, movedOn, ended(undefined))).toBe(movedOn);
    const followedByUser = [user, { ...earlier, id: 'u3' }];
    expect(withRemoteFinal(handle, followedByUser, ended(reply))).toBe(followedByUser);
  });
});
