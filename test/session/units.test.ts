// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { resolveEnvironment } from '../../src/client/environment.js';
import { memoryPersistence } from '../../src/client/persistence.js';
import { initialSessionState } from '../../src/client/session-store.js';
import { ConnectionError } from '../../src/errors/connection-error.js';
import { sessionIdentity } from '../../src/session/chat-session-options.js';
import { ActivityTracker } from '../../src/session/request-activity.js';
import {
  deriveSessionChatStatus,
  describeSessionChatStatus,
  type StatusInputs,
} from '../../src/session/session-chat-status.js';
import { shallowEqual } from '../../src/session/shallow-equal.js';
import { parseTabMessage } from '../../src/session/tab-channel.js';
import { TabCoordinator } from '../../src/session/tab-coordinator.js';
import { MemoryLocks } from './support/memory-locks.js';

const base: StatusInputs = {
  chatStatus: 'ready',
  chatError: undefined,
  session: initialSessionState('c'),
  phase: 'none',
  following: false,
  now: 1_000,
};

describe('deriveSessionChatStatus', () => {
  it('maps every combination to one status', () => {
    const reconnecting = {
      ...initialSessionState('c'),
      status: { type: 'reconnecting' as const, attempt: 2, nextRetryAt: 3_500 },
    };
    const closed = { ...initialSessionState('c'), closed: true, closedReason: 'bye' };
    const error = new ConnectionError({ code: 'NETWORK_ERROR', message: 'down' });
    expect(deriveSessionChatStatus(base)).toEqual({ type: 'ready' });
    expect(deriveSessionChatStatus({ ...base, chatStatus: 'submitted' })).toEqual({ type: 'sending' });
    expect(deriveSessionChatStatus({ ...base, chatStatus: 'submitted', phase: 'appended' })).toEqual({
      type: 'waking',
    });
    expect(deriveSessionChatStatus({ ...base, chatStatus: 'submitted', phase: 'resuming' })).toEqual({
      type: 'resuming',
    });
    expect(deriveSessionChatStatus({ ...base, chatStatus: 'submitted', phase: 'receiving' })).toEqual({
      type: 'streaming',
      following: false,
    });
    expect(deriveSessionChatStatus({ ...base, chatStatus: 'streaming', following: true })).toEqual({
      type: 'streaming',
      following: true,
    });
    expect(deriveSessionChatStatus({ ...base, chatStatus: 'streaming', session: reconnecting })).toEqual({
      type: 'reconnecting',
      attempt: 2,
      nextRetryAt: 3_500,
      retryInMs: 2_500,
    });
    // Reconnecting only matters while a reply is expected.
    expect(deriveSessionChatStatus({ ...base, session: reconnecting })).toEqual({ type: 'ready' });
    const waiting = {
      ...initialSessionState('c'),
      status: { type: 'waiting' as const, silentSince: 0, silentForMs: 41_500 },
    };
    expect(deriveSessionChatStatus({ ...base, chatStatus: 'streaming', session: waiting })).toEqual({
      type: 'waiting',
      silentForMs: 41_500,
      following: false,
    });
    expect(deriveSessionChatStatus({ ...base, session: waiting })).toEqual({ type: 'ready' });
    expect(deriveSessionChatStatus({ ...base, chatStatus: 'streaming', session: closed })).toEqual({
      type: 'closed',
      reason: 'bye',
    });
    expect(deriveSessionChatStatus({ ...base, chatStatus: 'error', chatError: error })).toEqual({
      type: 'error',
      error,
    });
  });

  it('labels statuses for people', () => {
    expect(
      describeSessionChatStatus({ type: 'reconnecting', attempt: 1, nextRetryAt: 0, retryInMs: 2_100 }),
    ).toBe('Reconnecting in 3 s');
    expect(describeSessionChatStatus({ type: 'waking' })).toBe('Agent waking up…');
    expect(describeSessionChatStatus({ type: 'waiting', silentForMs: 41_500, following: false })).toBe(
      'Agent quiet for 41 s',
    );
    expect(describeSessionChatStatus({ type: 'closed', reason: null })).toBe('Closed');
    expect(describeSessionChatStatus({ type: 'streaming', following: true })).toBe(
      'Streaming (from another tab)',
    );
  });
});

describe('shallowEqual', () => {
  it('compares one level deep', () => {
    const shared = { a: 1 };
    expect(shallowEqual({ x: 1, y: shared }, { x: 1, y: shared })).toBe(true);
    expect(shallowEqual({ x: 1, y: { a: 1 } }, { x: 1, y: { a: 1 } })).toBe(false);
    expect(shallowEqual([1, 2], [1, 2])).toBe(true);
    expect(shallowEqual([1, 2], { 0: 1, 1: 2 })).toBe(false);
    expect(shallowEqual({ a: 1 }, { a: 1, b: undefined })).toBe(false);
    expect(shallowEqual(Number.NaN, Number.NaN)).toBe(true);
    expect(shallowEqual(null, {})).toBe(false);
  });
});

describe('TabCoordinator', () => {
  const env = resolveEnvironment({ warn: () => {} });
  let chat = 0;
  const chatId = () => `unit-${++chat}-${Math.random().toString(36).slice(2)}`;

  it('Web Locks: one owner; the other waits and gets ownership on release; an aborted wait gives up', async () => {
    const locks = new MemoryLocks();
    const id = chatId();
    const a = new TabCoordinator(id, { locks, broadcastChannel: null }, env);
    const b = new TabCoordinator(id, { locks, broadcastChannel: null }, env);
    expect(a.mode).toBe('locks');
    expect(await a.acquire()).toBe(true);
    expect(await b.acquire()).toBe(false);
    const gaveUp = new AbortController();
    const abandoned = b.waitForOwnership(gaveUp.signal);
    gaveUp.abort();
    expect(await abandoned).toBe(false);
    const waiting = b.waitForOwnership(new AbortController().signal);
    a.release();
    expect(await waiting).toBe(true);
    expect([a.isOwner, b.isOwner]).toEqual([false, true]);
    a.dispose();
    b.dispose();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(locks.isHeld(`durable-chat:${id}`)).toBe(false);
  });

  it('with neither, every tab acts alone', async () => {
    const solo = new TabCoordinator(chatId(), { locks: null, broadcastChannel: null }, env);
    expect(solo.mode).toBe('none');
    expect(await solo.acquire()).toBe(true);
    solo.dispose();
  });

  it('ignores malformed channel messages', () => {
    expect(parseTabMessage(null)).toBeUndefined();
    expect(parseTabMessage({ type: 'claim', tabId: 'x' })).toBeUndefined();
    expect(parseTabMessage({ type: 'other', tabId: 'x' })).toBeUndefined();
    expect(parseTabMessage({ type: 'heartbeat', tabId: 'x' })).toEqual({ type: 'heartbeat', tabId: 'x' });
    expect(parseTabMessage({ type: 'turn-finished', tabId: 'x' })).toBeUndefined();
    expect(
      parseTabMessage({ type: 'turn-finished', tabId: 'x', message: { role: 'assistant' } }),
    ).toBeUndefined();
    const finished = {
      type: 'turn-finished',
      tabId: 'x',
      message: { id: 'm1', role: 'assistant', parts: [] },
    };
    expect(parseTabMessage(finished)).toEqual(finished);
    // A turn that ended with no reply on the owner's screen names the message it answers.
    const noReply = { type: 'turn-finished', tabId: 'x', answers: 'u1' };
    expect(parseTabMessage(noReply)).toEqual(noReply);
    expect(parseTabMessage({ ...finished, answers: 7 })).toBeUndefined();
    // The owner's order: its message ids, or nothing of it.
    const ordered = { ...finished, order: ['u1', 'm1'] };
    expect(parseTabMessage(ordered)).toEqual(ordered);
    expect(parseTabMessage({ ...finished, order: 'u1,m1' })).toBeUndefined();
    expect(parseTabMessage({ ...finished, order: ['u1', 2] })).toBeUndefined();
    expect(parseTabMessage({ type: 'turn-stopped', tabId: 'x' })).toEqual({
      type: 'turn-stopped',
      tabId: 'x',
    });
  });
});

describe('ActivityTracker', () => {
  it('follows the newest request only; an error is kept until the next request', () => {
    const tracker = new ActivityTracker();
    const seen: string[] = [];
    tracker.subscribe(() => seen.push(tracker.get().phase));
    const first = tracker.begin('sending');
    first('appended');
    const second = tracker.begin('resuming');
    first('none', new Error('late failure of an earlier request'));
    expect(tracker.get()).toEqual({ phase: 'resuming', error: undefined });
    const failure = new Error('turn failed');
    second('none', failure);
    expect(tracker.get()).toEqual({ phase: 'none', error: failure });
    tracker.begin('sending');
    expect(tracker.get().error).toBeUndefined();
    expect(seen).toEqual(['sending', 'appended', 'resuming', 'none', 'sending']);
  });
});

describe('sessionIdentity', () => {
  const options = {
    chatId: 'c',
    baseURL: 'http://x',
    taskIdentifier: 't',
    startSession: async () => ({ publicAccessToken: 'p' }),
  };
  it('tells adapters apart by their declared id, never by object identity (an inline adapter is new per render)', () => {
    const identity = (persistence: ReturnType<typeof memoryPersistence>) =>
      sessionIdentity({ ...options, persistence });
    expect(identity(memoryPersistence())).toBe(identity(memoryPersistence()));
    expect(identity({ ...memoryPersistence(), id: 'a' })).toBe(identity({ ...memoryPersistence(), id: 'a' }));
    expect(identity({ ...memoryPersistence(), id: 'a' })).not.toBe(
      identity({ ...memoryPersistence(), id: 'b' }),
    );
    expect(identity({ ...memoryPersistence(), id: 'a' })).not.toBe(identity(memoryPersistence()));
    expect(sessionIdentity({ ...options, persistence: 'local' })).toBe(sessionIdentity(options));
  });
});
