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

/** The parts of a session handle `TurnFollow` uses; a send of this tab was refused as `refused`. */
function fakeHandle(refused: string) {
  const handle = {
    remoteTurnHandler: undefined as ((turn: RemoteTurn) => void) | undefined,
    remoteFinishHandler: undefined as unknown,
    resumeMessageHandler: undefined as unknown,
    followedRequests: 0,
    followedResumes: 0,
    getTabState: () => ({ mode: 'locks', owner: false, following: true }),
    withoutRefused: (messages: UIMessage[]) => messages.filter((candidate) => candidate.id !== refused),
    activity: { clearError: () => {} },
    client: { environment: { warn: () => {} } },
    announceFinished: () => {},
  };
  return handle;
}

describe('TurnFollow', () => {
  it('shows a turn announced while its own send waited, even when the binding never saw the send busy (submitted → error between two renders)', () => {
    const handle = fakeHandle('mine');
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
    chat.status = 'error';
    follow.observe();
    expect(chat.messages.map((shown) => shown.id)).toEqual(['theirs']);
    expect(resumes).toEqual([1]);
  });
});
