import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import type { ChatSessionHandle } from '../../src/session/chat-session-handle.js';
import type { RemoteTurn } from '../../src/session/chat-session-options.js';
import { type FollowableChat, TurnFollow } from '../../src/session/turn-follow.js';

const message = (id: string, text: string): UIMessage => ({
  id,
  role: 'user',
  parts: [{ type: 'text', text }],
});

/** The parts of a session handle `TurnFollow` uses (the gate sets `refusedMessageId` when a send is refused). */
function fakeHandle() {
  const handle = {
    remoteTurnHandler: undefined as ((turn: RemoteTurn) => void) | undefined,
    remoteFinishHandler: undefined as unknown,
    resumeMessageHandler: undefined as unknown,
    followedRequests: 0,
    followedResumes: 0,
    getTabState: () => ({ mode: 'locks', owner: false, following: true }),
    refusedMessageId: undefined as string | undefined,
    ownSendMessageId: undefined,
    followedReplyId: undefined,
    // No turn found live at load: `withRemoteFinal` replaces the copy this tab shows by id.
    foundTurnMessage: undefined,
    activity: { clearError: () => {} },
    client: { environment: { warn: () => {} } },
    announceFinished: () => {},
    // This tab continued no reply of its own (an approval answered): every final is news.
    isEarlierFinal: () => false,
  };
  return handle;
}

describe('TurnFollow', () => {
  it('shows a turn announced while its own send waited, even when the binding never saw the send busy (submitted → error between two renders)', () => {
    const handle = fakeHandle();
    const resumes: number[] = [];
    const chat: FollowableChat = {
      status: 'ready',
      messages: [],
      setMessages(next) {
        chat.messages = typeof next === 'function' ? next(chat.messages) : next;
      },
      resumeStream: () => {
        resumes.push(1);
        return new Promise<void>(() => {});
      },
    };
    const follow = new TurnFollow(handle as unknown as ChatSessionHandle, () => chat);
    follow.attach();
    follow.observe();
    // This tab's send: its message shows, the chat is busy waiting for the lock.
    chat.messages = [message('mine', 'from this tab')];
    chat.status = 'submitted';
    // Another tab's turn is announced meanwhile: it waits for this chat to be idle.
    handle.remoteTurnHandler?.({ message: message('theirs', 'from the other tab') });
    expect(resumes).toEqual([]);
    // The send is refused; the binding renders only the outcome.
    handle.refusedMessageId = 'mine';
    chat.status = 'error';
    follow.observe();
    expect(chat.messages.map((shown) => shown.id)).toEqual(['theirs']);
    expect(resumes).toEqual([1]);
  });

  it('lets go of a refused send’s error in session.status when the followed reply it came during ends (error → streaming → ready)', () => {
    const handle = fakeHandle();
    let cleared = 0;
    handle.activity = {
      clearError: () => {
        cleared++;
      },
    };
    const chat: FollowableChat = {
      status: 'streaming',
      messages: [],
      setMessages() {},
      resumeStream: () => Promise.resolve(),
    };
    const follow = new TurnFollow(handle as unknown as ChatSessionHandle, () => chat);
    follow.attach();
    follow.observe();
    // This tab follows the other tab's reply; a send here is refused meanwhile (TURN_IN_OTHER_TAB).
    chat.status = 'error';
    chat.error = new Error('TURN_IN_OTHER_TAB');
    follow.observe();
    expect(cleared).toBe(0);
    // The followed reply writes on (the AI SDK says streaming, its error gone), then ends.
    chat.status = 'streaming';
    chat.error = undefined;
    follow.observe();
    expect(cleared).toBe(0);
    chat.status = 'ready';
    follow.observe();
    expect(cleared).toBe(1);
  });

  it("applies another tab's final reply to the chat's messages as they are, not to the committed render's: a message sent since stays", () => {
    const handle = fakeHandle();
    const reply = (text: string): UIMessage => ({
      id: 'reply',
      role: 'assistant',
      parts: [{ type: 'text', text }],
    });
    // What the chat holds; `messages` is the committed render's copy (as useChat's result).
    let held: UIMessage[] = [message('theirs', 'from the other tab'), reply('partial')];
    const chat: FollowableChat = {
      status: 'ready',
      messages: held,
      setMessages(next) {
        held = typeof next === 'function' ? next(held) : next;
      },
      resumeStream: () => new Promise<void>(() => {}),
    };
    const follow = new TurnFollow(handle as unknown as ChatSessionHandle, () => chat);
    follow.attach();
    follow.observe();
    // This tab sends: the chat has its message, the render that shows it (busy) has not committed.
    held = [...held, message('mine', 'from this tab')];
    (handle.remoteFinishHandler as (final: { message: UIMessage; answers: undefined }) => void)({
      message: reply('the whole reply'),
      answers: undefined,
    });
    expect(
      held.map((shown) => [shown.id, shown.parts[0]?.type === 'text' ? shown.parts[0].text : '']),
    ).toEqual([
      ['theirs', 'from the other tab'],
      ['reply', 'the whole reply'],
      ['mine', 'from this tab'],
    ]);
  });
});
