// @vitest-environment happy-dom
import { BroadcastChannel as NodeBroadcastChannel } from 'node:worker_threads';
import { waitFor as waitForDom } from '@testing-library/react';
import { lastAssistantMessageIsCompleteWithToolCalls } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PersistedChatRecord } from '../../src/client/persistence.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { isDurableChatError } from '../../src/errors/durable-chat-error.js';
import type { UseDurableChatOptions } from '../../src/react/use-durable-chat.js';
import type { BroadcastChannelLike } from '../../src/session/tab-channel.js';
import type { TabCoordinationOptions } from '../../src/session/tab-coordinator.js';
import { MemoryLocks } from '../session/support/memory-locks.js';
import { startSessionVia } from '../transport/support/dev-server-fixture.js';
import {
  chatOptions,
  type MountedChat,
  mountChat,
  nextChatId,
  recordingFetch,
  startEchoServer,
} from './support/harness.js';

let server: DevServer;
let clockOffset = 0;
beforeAll(async () => {
  // A movable server clock, so a test can mint a token that expires later than the current one.
  server = await startEchoServer({ clock: () => Date.now() + clockOffset });
});
afterAll(async () => {
  await server.close();
});

const channel = (name: string) => new NodeBroadcastChannel(name) as unknown as BroadcastChannelLike;
const SLOW = 'two tabs, one turn';
const slowReply = (repeat: number) => `assistant: Echo: ${Array(repeat).fill(SLOW).join(' ')}`;

/** A "tab": its own React root over the shared localStorage, locks and BroadcastChannels. */
function openTab(
  chatId: string,
  tabs: TabCoordinationOptions,
  overrides: Partial<UseDurableChatOptions> = {},
) {
  const { persistence: _memory, ...options } = chatOptions(server, chatId);
  return mountChat({ ...options, persistence: 'local', tabs, ...overrides });
}

async function ownerTurn(owner: MountedChat, repeat: number) {
  void owner.run((current) => current.sendMessage({ text: SLOW }, { metadata: { delayMs: 15, repeat } }));
  await waitForDom(() => expect(owner.current.session.tab.owner).toBe(true));
}

describe.each([
  ['Web Locks', () => ({ locks: new MemoryLocks(), broadcastChannel: channel })],
  ['BroadcastChannel lease', () => ({ locks: null, broadcastChannel: channel })],
])('two tabs (%s)', (_name, coordination) => {
  it('the other tab follows read-only and sees the reply; it cannot start a turn meanwhile', async () => {
    const chatId = nextChatId('tabs');
    const tabs: TabCoordinationOptions = coordination();
    const owner = openTab(chatId, tabs);
    const recorder = recordingFetch();
    const follower = openTab(chatId, tabs, { fetch: recorder.fetch });
    await ownerTurn(owner, 60);
    await waitForDom(() => expect(follower.current.session.tab.following).toBe(true));
    await waitForDom(() =>
      expect(follower.current.sessionStatus).toEqual({ type: 'streaming', following: true }),
    );
    const refused = await follower.current.sendAction({ type: 'shout' }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isDurableChatError(refused) && refused.code).toBe('TURN_IN_OTHER_TAB');
    await waitForDom(() => expect(owner.transcript()).toEqual([`user: ${SLOW}`, slowReply(60)]), {
      timeout: 5_000,
    });
    await waitForDom(() => expect(follower.transcript()).toEqual([`user: ${SLOW}`, slowReply(60)]), {
      timeout: 5_000,
    });
    expect(recorder.requests.filter((request) => request.path.endsWith('/in/append'))).toEqual([]);
    await waitForDom(() => expect(follower.current.session.tab).toMatchObject({ following: false }));
    await waitForDom(() => expect(owner.current.session.tab.owner).toBe(false));

    // Roles swap for the next turn: the former follower sends, the former owner follows.
    await follower.run((current) => current.sendMessage({ text: 'from the second tab' }));
    await waitForDom(() => expect(follower.transcript().at(-1)).toBe('assistant: Echo: from the second tab'));
    await waitForDom(() =>
      expect(owner.transcript().slice(-2)).toEqual([
        'user: from the second tab',
        'assistant: Echo: from the second tab',
      ]),
    );
    owner.unmount();
    follower.unmount();
  });

  it('a tab that goes away mid-turn is taken over: the other tab owns and finishes the reply', async () => {
    const chatId = nextChatId('takeover');
    const tabs: TabCoordinationOptions = coordination();
    const owner = openTab(chatId, tabs);
    const follower = openTab(chatId, tabs);
    await ownerTurn(owner, 12);
    await waitForDom(() => expect(follower.current.session.tab.following).toBe(true));
    owner.unmount();
    await waitForDom(() =>
      expect(follower.current.session.tab).toMatchObject({ owner: true, following: false }),
    );
    await waitForDom(() => expect(follower.transcript()).toEqual([`user: ${SLOW}`, slowReply(12)]), {
      timeout: 5_000,
    });
    await waitForDom(() => expect(follower.current.session.tab.owner).toBe(false));
    follower.unmount();
  });
});

describe('reload with tab coordination on', () => {
  it('the reloaded tab finds the lock free, owns the turn and shows the reply exactly once', async () => {
    const chatId = nextChatId('reload-tabs');
    const locks = new MemoryLocks();
    const tabs: TabCoordinationOptions = { locks, broadcastChannel: channel };
    const first = openTab(chatId, tabs);
    await ownerTurn(first, 12);
    await waitForDom(() => expect((first.transcript()[1] ?? '').length).toBeGreaterThan(40));
    await first.current.session.sessionTransport.getClient(chatId).flushPersistence();
    const user = first.current.messages[0];
    first.unmount();
    const recorder = recordingFetch();
    const second = openTab(chatId, tabs, {
      messages: user === undefined ? [] : [user],
      fetch: recorder.fetch,
    });
    await waitForDom(() => expect(second.current.session.tab.owner).toBe(true));
    await waitForDom(() => expect(second.transcript()).toEqual([`user: ${SLOW}`, slowReply(12)]), {
      timeout: 5_000,
    });
    await waitForDom(() => expect(second.current.session.tab.owner).toBe(false));
    expect(second.current.messages.filter((message) => message.role === 'assistant')).toHaveLength(1);
    expect(recorder.requests.filter((request) => request.path.endsWith('/out'))).toHaveLength(1);
    expect(locks.isHeld(`durable-chat:${chatId}`)).toBe(false);
    second.unmount();
  });
});

describe('tab coordination off', () => {
  it('with neither Web Locks nor BroadcastChannel each tab acts alone', async () => {
    const chatId = nextChatId('solo');
    const tab = openTab(chatId, { locks: null, broadcastChannel: null });
    await tab.run((current) => current.sendMessage({ text: 'alone' }));
    await waitForDom(() => expect(tab.transcript()).toEqual(['user: alone', 'assistant: Echo: alone']));
    expect(tab.current.session.tab).toEqual({ mode: 'none', owner: false, following: false });
    tab.unmount();
  });
});

describe('storage events from another tab', () => {
  it('update this tab’s cursor and token; a corrupt record is ignored with a warning; closed is adopted', async () => {
    const chatId = nextChatId('storage');
    const warnings: string[] = [];
    const tab = openTab(
      chatId,
      { locks: null, broadcastChannel: null },
      { environment: { warn: (message) => warnings.push(message) } },
    );
    await tab.run((current) => current.sendMessage({ text: 'cursor' }));
    await waitForDom(() => expect(tab.current.status).toBe('ready'));
    const client = tab.current.session.sessionTransport.getClient(chatId);
    await client.flushPersistence();
    const key = `durable-chat:${chatId}`;
    const stored = JSON.parse(localStorage.getItem(key) ?? 'null') as PersistedChatRecord;
    const before = client.getState();

    clockOffset = 120_000;
    const { publicAccessToken } = await startSessionVia(server)({
      chatId,
      taskIdentifier: 'echo',
      clientData: undefined,
    });
    clockOffset = 0;
    const fromOtherTab: PersistedChatRecord = {
      ...stored,
      publicAccessToken,
      lastEventId: (stored.lastEventId ?? 0) + 3,
    };
    window.dispatchEvent(
      new StorageEvent('storage', { key, newValue: JSON.stringify(fromOtherTab), storageArea: localStorage }),
    );
    expect(client.getState().token).toBe(publicAccessToken);
    expect(client.getState().tokenExpiresAt).toBeGreaterThan(before.tokenExpiresAt ?? 0);
    expect(client.getState().lastEventId).toBe((stored.lastEventId ?? 0) + 3);
    await waitForDom(() => expect(tab.current.session.state.lastEventId).toBe((stored.lastEventId ?? 0) + 3));

    window.dispatchEvent(
      new StorageEvent('storage', { key, newValue: '{not json', storageArea: localStorage }),
    );
    expect(warnings.some((warning) => warning.includes('not JSON'))).toBe(true);
    expect(client.getState().token).toBe(publicAccessToken);

    window.dispatchEvent(
      new StorageEvent('storage', {
        key: `durable-chat:other-${chatId}`,
        newValue: JSON.stringify({ ...fromOtherTab, closed: true }),
      }),
    );
    expect(client.getState().closed).toBe(false);
    window.dispatchEvent(
      new StorageEvent('storage', {
        key,
        newValue: JSON.stringify({ ...fromOtherTab, closed: true, closedReason: 'elsewhere' }),
      }),
    );
    await waitForDom(() =>
      expect(tab.current.sessionStatus).toEqual({ type: 'closed', reason: 'elsewhere' }),
    );
    tab.unmount();
  });
});

describe('only the tab that owns a turn answers it', () => {
  it('a client-side tool is answered once, by the owner; the follower runs no callbacks; both tabs end with the same transcript', async () => {
    const chatId = nextChatId('tool-tabs');
    const tabs: TabCoordinationOptions = { locks: new MemoryLocks(), broadcastChannel: channel };
    const calls = { owner: [] as string[], follower: [] as string[] };
    const finishes = { owner: 0, follower: 0 };
    const recorders = { owner: recordingFetch(), follower: recordingFetch() };
    const tabsByName: Record<'owner' | 'follower', MountedChat | undefined> = {
      owner: undefined,
      follower: undefined,
    };
    const open = (name: 'owner' | 'follower') =>
      openTab(chatId, tabs, {
        fetch: recorders[name].fetch,
        sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
        onToolCall: ({ toolCall }) => {
          calls[name].push(toolCall.toolName);
          void tabsByName[name]?.current.addToolOutput({
            tool: 'askUser' as never,
            toolCallId: toolCall.toolCallId,
            output: `blue from the ${name}` as never,
          });
        },
        onFinish: () => {
          finishes[name] += 1;
        },
      });
    const owner = open('owner');
    tabsByName.owner = owner;
    const follower = open('follower');
    tabsByName.follower = follower;
    await owner.run((current) => current.sendMessage({ text: '/ask favourite colour?' }));
    const expected = [
      'user: /ask favourite colour?',
      'assistant: [tool-askUser]You answered: blue from the owner',
    ];
    await waitForDom(() => expect(owner.transcript()).toEqual(expected), { timeout: 5_000 });
    await waitForDom(() => expect(follower.transcript()).toEqual(expected), { timeout: 5_000 });
    await waitForDom(() =>
      expect([owner.current.status, follower.current.status]).toEqual(['ready', 'ready']),
    );
    const appended = [...recorders.owner.requests, ...recorders.follower.requests].filter((request) =>
      request.path.endsWith('/in/append'),
    );
    expect(appended).toHaveLength(2); // the message and one tool output
    expect(recorders.follower.requests.filter((request) => request.path.endsWith('/in/append'))).toEqual([]);
    expect(calls).toEqual({ owner: ['askUser'], follower: [] });
    expect(finishes.follower).toBe(0);
    expect(finishes.owner).toBeGreaterThanOrEqual(1);
    owner.unmount();
    follower.unmount();
  });

  it('sendAction holds the tab lock until its output has streamed, not just until its append returns', async () => {
    const chatId = nextChatId('action-lock');
    const locks = new MemoryLocks();
    const tabs: TabCoordinationOptions = { locks, broadcastChannel: channel };
    const owner = openTab(chatId, tabs);
    const follower = openTab(chatId, tabs);
    await owner.run((current) => current.sendMessage({ text: 'hi' }));
    await waitForDom(() => expect(owner.current.status).toBe('ready'));
    await waitForDom(() => expect(locks.isHeld(`durable-chat:${chatId}`)).toBe(false));
    await owner.run((current) => current.sendAction({ type: 'shout' }));
    expect(locks.isHeld(`durable-chat:${chatId}`)).toBe(true);
    await waitForDom(() => expect(owner.transcript().at(-1)).toBe('assistant: SHOUT'));
    await waitForDom(() => expect(follower.transcript().at(-1)).toBe('assistant: SHOUT'));
    await waitForDom(() => expect(locks.isHeld(`durable-chat:${chatId}`)).toBe(false));
    expect(follower.transcript()).toEqual(owner.transcript());
    owner.unmount();
    follower.unmount();
  });
});
