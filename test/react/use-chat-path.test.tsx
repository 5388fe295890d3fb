// @vitest-environment happy-dom

import { BroadcastChannel as NodeBroadcastChannel } from 'node:worker_threads';
import { waitFor as waitForDom } from '@testing-library/react';
import { lastAssistantMessageIsCompleteWithToolCalls, type UIMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PersistedChatRecord } from '../../src/client/persistence.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { isDurableChatError } from '../../src/errors/durable-chat-error.js';
import type { BroadcastChannelLike } from '../../src/session/tab-channel.js';
import { MemoryLocks } from '../session/support/memory-locks.js';
import {
  appendKinds,
  nextChatId,
  type RecordedRequest,
  recordingFetch,
  startEchoServer,
} from './support/harness.js';
import { type MountedPlainChat, mountPlainChat, sessionOptions } from './support/plain-harness.js';

let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer();
});
afterAll(async () => {
  await server.close();
});

const outReads = (requests: RecordedRequest[]) =>
  requests.filter((request) => request.path.endsWith('/out')).length;

const LONG = 'the plain useChat path';
const fullReply = (repeat: number) => `assistant: Echo: ${Array(repeat).fill(LONG).join(' ')}`;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('useChat + useChatSession: the transport is bound to its chat', () => {
  it('useChat without id: session.id fails with INVALID_INPUT (field chatId) and appends nothing', async () => {
    const recorder = recordingFetch();
    const errors: unknown[] = [];
    const page = mountPlainChat({
      session: sessionOptions(server, nextChatId('unbound'), undefined, { fetch: recorder.fetch }),
      chat: { id: null, onError: (error) => errors.push(error) },
    });
    expect(page.session.id).toBe(page.session.chatId);
    await page.chat.sendMessage({ text: 'which chat?' });
    await waitForDom(() => expect(page.chat.status).toBe('error'));
    const error = page.chat.error;
    expect(isDurableChatError(error) && error.code).toBe('INVALID_INPUT');
    expect((error as { field?: string }).field).toBe('chatId');
    expect(error?.message).toContain('id: session.id');
    expect(errors).toEqual([error]);
    expect(appendKinds(recorder.requests)).toEqual([]);
    page.unmount();
  });

  it('with id: session.id, session.stop() stops the turn useChat started', async () => {
    const recorder = recordingFetch();
    const page = mountPlainChat({
      session: sessionOptions(server, nextChatId('bound'), undefined, {
        fetch: recorder.fetch,
        clientData: { delayMs: 20, repeat: 40 },
      }),
    });
    void page.chat.sendMessage({ text: LONG });
    await waitForDom(() => expect((page.transcript()[1] ?? '').length).toBeGreaterThan(30));
    await page.session.stop();
    await waitForDom(() => expect(page.chat.status).toBe('ready'));
    expect(appendKinds(recorder.requests)).toEqual(['message', 'stop']);
    page.unmount();
  });
});

describe("useChat's own stop() through session.transport", () => {
  it('stops the agent with one stop record; after a reload the stopped reply does not resume', async () => {
    const chatId = nextChatId('usechat-stop');
    const records = new Map<string, PersistedChatRecord>();
    const recorder = recordingFetch();
    const page = mountPlainChat({
      session: sessionOptions(server, chatId, records, {
        fetch: recorder.fetch,
        clientData: { delayMs: 20, repeat: 40 },
      }),
      chat: { resume: true },
    });
    void page.chat.sendMessage({ text: LONG });
    await waitForDom(() => expect((page.transcript()[1] ?? '').length).toBeGreaterThan(30));
    await page.chat.stop();
    await waitForDom(() => expect(appendKinds(recorder.requests)).toEqual(['message', 'stop']));
    await waitForDom(() => expect(records.get(chatId)).toMatchObject({ turnLive: false }));
    const shown = page.chat.messages.map((message) => structuredClone(message)) as UIMessage[];
    expect((page.transcript()[1] ?? '').length).toBeLessThan(fullReply(40).length);
    page.unmount();

    const reloaded = recordingFetch();
    const second = mountPlainChat({
      session: sessionOptions(server, chatId, records, { fetch: reloaded.fetch }),
      chat: { resume: true, messages: shown },
    });
    await waitForDom(() => expect(second.session.state.hydrated).toBe(true));
    await pause(300);
    expect(outReads(reloaded.requests)).toBe(0);
    expect(second.statuses).not.toContain('streaming');
    expect(second.statuses).not.toContain('resuming');
    expect(second.chat.messages).toEqual(shown);
    second.unmount();
  });

  it('unmounting mid-reply only disconnects: no stop, no onError, no failed onFinish; the remount finishes the reply once', async () => {
    const chatId = nextChatId('usechat-unmount');
    const records = new Map<string, PersistedChatRecord>();
    const recorder = recordingFetch();
    const errors: unknown[] = [];
    const finishes: { isError: boolean; isAbort: boolean }[] = [];
    const page = mountPlainChat({
      session: sessionOptions(server, chatId, records, {
        fetch: recorder.fetch,
        clientData: { delayMs: 20, repeat: 10 },
      }),
      chat: {
        resume: true,
        onError: (error) => errors.push(error),
        onFinish: ({ isError, isAbort }) => finishes.push({ isError, isAbort }),
      },
    });
    void page.chat.sendMessage({ text: LONG });
    await waitForDom(() => expect((page.transcript()[1] ?? '').length).toBeGreaterThan(30));
    await page.session.sessionTransport.getClient(chatId).flushPersistence();
    const user = structuredClone(page.chat.messages[0]) as UIMessage;
    page.unmount();
    await pause(200);
    expect(errors).toEqual([]);
    // @ai-sdk/react 4 stops its chat on unmount (isAbort: true): upstream, never an error.
    expect(finishes.filter((finish) => finish.isError)).toEqual([]);
    expect(appendKinds(recorder.requests)).toEqual(['message']);
    expect(records.get(chatId)).toMatchObject({ turnLive: true });

    const second = mountPlainChat({
      session: sessionOptions(server, chatId, records),
      chat: { resume: true, messages: [user] },
    });
    await waitForDom(() => expect(second.transcript()).toEqual([`user: ${LONG}`, fullReply(10)]), {
      timeout: 5_000,
    });
    await waitForDom(() => expect(second.session.status.type).toBe('ready'));
    second.unmount();
  });
});

describe('useChatSession status', () => {
  it('shows sending → waking → streaming → ready from the transport, and the label', async () => {
    const page = mountPlainChat({
      session: sessionOptions(server, nextChatId('plain-status'), undefined, {
        clientData: { delayMs: 10, repeat: 6 },
      }),
    });
    expect(page.session.status).toEqual({ type: 'ready' });
    expect(page.session.statusLabel).toBe('Ready');
    void page.chat.sendMessage({ text: 'status please' });
    await waitForDom(() => expect(page.session.status.type).toBe('streaming'));
    expect(page.session.statusLabel).toBe('Streaming');
    await waitForDom(() => expect(page.chat.status).toBe('ready'));
    await waitForDom(() => expect(page.session.status).toEqual({ type: 'ready' }));
    expect(page.statuses[0]).toBe('ready');
    expect(page.statuses).toContain('sending');
    expect(page.statuses.slice(-2)).toEqual(['streaming', 'ready']);
    page.unmount();
  });

  it('a failed turn shows as an error with the cause', async () => {
    const page = mountPlainChat({ session: sessionOptions(server, nextChatId('plain-error')) });
    void page.chat.sendMessage({ text: '/error now' });
    await waitForDom(() => expect(page.chat.status).toBe('error'));
    await waitForDom(() => expect(page.session.status.type).toBe('error'));
    expect(page.session.statusLabel).toMatch(/^Error: /);
    page.unmount();
  });
});

describe('useChat + useChatSession + useFollowTurns in two tabs', () => {
  it("the other tab shows the owner's turn read-only (status streaming, following) and ends with the same transcript", async () => {
    const chatId = nextChatId('plain-tabs');
    const channel = (name: string) => new NodeBroadcastChannel(name) as unknown as BroadcastChannelLike;
    const tabs = { locks: new MemoryLocks(), broadcastChannel: channel };
    const { persistence: _memory, ...shared } = sessionOptions(server, chatId);
    const owner = mountPlainChat({
      session: { ...shared, persistence: 'local', tabs, clientData: { delayMs: 15, repeat: 30 } },
      chat: { resume: true },
    });
    const recorder = recordingFetch();
    const follower = mountPlainChat({
      session: { ...shared, persistence: 'local', tabs, fetch: recorder.fetch },
      chat: { resume: true },
    });
    void owner.chat.sendMessage({ text: LONG });
    await waitForDom(() => expect(follower.session.status).toEqual({ type: 'streaming', following: true }));
    expect(follower.session.statusLabel).toBe('Streaming (from another tab)');
    await waitForDom(() => expect((follower.transcript()[1] ?? '').length).toBeGreaterThan(20));
    await waitForDom(() => expect(owner.transcript()).toEqual([`user: ${LONG}`, fullReply(30)]), {
      timeout: 5_000,
    });
    await waitForDom(() => expect(follower.transcript()).toEqual(owner.transcript()), { timeout: 5_000 });
    await waitForDom(() => expect(follower.session.status).toEqual({ type: 'ready' }));
    expect(appendKinds(recorder.requests)).toEqual([]);
    owner.unmount();
    follower.unmount();
  });
});

describe('useChat + useChatSession + useFollowTurns: only the owner answers', () => {
  it('with session.isFollowingTurn() in the callbacks, a client-side tool is answered once, by the owner; both tabs end with the same transcript', async () => {
    const chatId = nextChatId('plain-tool-tabs');
    const channel = (name: string) => new NodeBroadcastChannel(name) as unknown as BroadcastChannelLike;
    const tabs = { locks: new MemoryLocks(), broadcastChannel: channel };
    const { persistence: _memory, ...shared } = sessionOptions(server, chatId);
    const recorder = recordingFetch();
    const calls: string[] = [];
    const pages: Record<string, MountedPlainChat | undefined> = {};
    const open = (name: string) =>
      mountPlainChat({
        session: { ...shared, persistence: 'local', tabs, fetch: recorder.fetch },
        chat: {
          resume: true,
          sendAutomaticallyWhen: (input) =>
            pages[name]?.session.isFollowingTurn() === true
              ? false
              : lastAssistantMessageIsCompleteWithToolCalls(input),
          onToolCall: ({ toolCall }) => {
            const page = pages[name];
            if (page === undefined || page.session.isFollowingTurn()) return;
            calls.push(name);
            void page.chat.addToolOutput({
              tool: 'askUser' as never,
              toolCallId: toolCall.toolCallId,
              output: `green from the ${name}` as never,
            });
          },
        },
      });
    const owner = open('owner');
    pages.owner = owner;
    const follower = open('follower');
    pages.follower = follower;
    await owner.chat.sendMessage({ text: '/ask favourite colour?' });
    await waitForDom(
      () =>
        expect(owner.transcript().at(-1)).toBe('assistant: [tool-askUser]You answered: green from the owner'),
      {
        timeout: 5_000,
      },
    );
    await waitForDom(() => expect(follower.transcript()).toEqual(owner.transcript()), { timeout: 5_000 });
    await waitForDom(() => expect([owner.chat.status, follower.chat.status]).toEqual(['ready', 'ready']));
    expect(calls).toEqual(['owner']);
    expect(appendKinds(recorder.requests)).toEqual(['message', 'message']); // the user's message, one tool output
    owner.unmount();
    follower.unmount();
  });
});

describe('useChat + useChatSession: switching chats mid-reply', () => {
  it('only disconnects chat A: no stop, no onError; @ai-sdk/react reports at most an aborted onFinish; A resumes when shown again', async () => {
    const records = new Map<string, PersistedChatRecord>();
    const a = nextChatId('plain-switch-a');
    const b = nextChatId('plain-switch-b');
    const recorder = recordingFetch();
    const errors: unknown[] = [];
    const finishes: { isAbort: boolean; isError: boolean }[] = [];
    const chat = {
      resume: true,
      onError: (error: unknown) => errors.push(error),
      onFinish: ({ isAbort, isError }: { isAbort: boolean; isError: boolean }) =>
        finishes.push({ isAbort, isError }),
    };
    const options = (chatId: string) =>
      sessionOptions(server, chatId, records, {
        fetch: recorder.fetch,
        clientData: { delayMs: 20, repeat: 10 },
      });
    const page = mountPlainChat({ session: options(a), chat });
    void page.chat.sendMessage({ text: LONG });
    await waitForDom(() => expect((page.transcript()[1] ?? '').length).toBeGreaterThan(30));
    await page.session.sessionTransport.getClient(a).flushPersistence();
    const userA = structuredClone(page.chat.messages[0]) as UIMessage;

    page.update({ session: options(b), chat });
    await waitForDom(() => expect(page.session.id).toBe(b));
    await pause(500);
    expect(errors).toEqual([]);
    // Upstream: @ai-sdk/react 4 stops the old chat when the id changes and reports it through
    // the newest onFinish with isAbort: true (save in onFinish only when !isAbort).
    expect(finishes.every((finish) => finish.isAbort && !finish.isError)).toBe(true);
    expect(appendKinds(recorder.requests)).toEqual(['message']);
    expect(records.get(a)).toMatchObject({ turnLive: true });
    expect(page.chat.messages).toEqual([]);

    page.update({ session: options(a), chat: { ...chat, messages: [userA] } });
    await waitForDom(() => expect(page.transcript()).toEqual([`user: ${LONG}`, fullReply(10)]), {
      timeout: 5_000,
    });
    expect(errors).toEqual([]);
    expect(appendKinds(recorder.requests)).toEqual(['message']);
    page.unmount();
  });
});

describe('useChat + useChatSession under StrictMode', () => {
  it("sends, and resumes after a reload, without a stray stop (StrictMode's cleanup is not the user's stop)", async () => {
    const chatId = nextChatId('plain-strict');
    const records = new Map<string, PersistedChatRecord>();
    const recorder = recordingFetch();
    const options = sessionOptions(server, chatId, records, {
      fetch: recorder.fetch,
      clientData: { delayMs: 20, repeat: 10 },
    });
    const first = mountPlainChat({ session: options, chat: { resume: true } }, { strict: true });
    void first.chat.sendMessage({ text: LONG });
    await waitForDom(() => expect((first.transcript()[1] ?? '').length).toBeGreaterThan(30));
    await first.session.sessionTransport.getClient(chatId).flushPersistence();
    const user = structuredClone(first.chat.messages[0]) as UIMessage;
    first.unmount();

    const second = mountPlainChat(
      { session: options, chat: { resume: true, messages: [user] } },
      { strict: true },
    );
    await waitForDom(() => expect(second.transcript()).toEqual([`user: ${LONG}`, fullReply(10)]), {
      timeout: 5_000,
    });
    await waitForDom(() => expect(second.session.status).toEqual({ type: 'ready' }));
    await pause(100);
    expect(appendKinds(recorder.requests)).toEqual(['message']);
    second.unmount();
  });
});
