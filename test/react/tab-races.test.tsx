// @vitest-environment happy-dom
// Issue 19 items 3, 4 and 10: tabs that open, reload or send while another tab's turn is
// live. Each "tab" is its own React root over the shared localStorage, one lock manager
// (Web Locks) or none (BroadcastChannel lease), and Node's BroadcastChannel.
import { BroadcastChannel as NodeBroadcastChannel } from 'node:worker_threads';
import { waitFor as waitForDom } from '@testing-library/react';
import { lastAssistantMessageIsCompleteWithToolCalls, type UIMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevServer } from '../../src/dev-server/index.js';
import type { UseDurableChatOptions } from '../../src/react/use-durable-chat.js';
import type { BroadcastChannelLike } from '../../src/session/tab-channel.js';
import type { TabCoordinationOptions } from '../../src/session/tab-coordinator.js';
import { MemoryLocks } from '../session/support/memory-locks.js';
import { pauseTurn, startMomentsServer } from '../transport/support/moments.js';
import {
  chatOptions,
  type MountedChat,
  mountChat,
  nextChatId,
  type RecordedRequest,
  recordingFetch,
} from './support/harness.js';
import { type MountedPlainChat, mountPlainChat, sessionOptions } from './support/plain-harness.js';

let server: DevServer;
beforeAll(async () => {
  server = await startMomentsServer();
});
afterAll(async () => {
  await server.close();
});

const channel = (name: string) => new NodeBroadcastChannel(name) as unknown as BroadcastChannelLike;
const appends = (requests: RecordedRequest[]) =>
  requests.filter((request) => request.method === 'POST' && request.path.endsWith('/in/append'));
const textOf = (messages: readonly UIMessage[]) =>
  messages.map((message) => message.parts.map((part) => (part.type === 'text' ? part.text : '')).join(''));

const coordinations: [string, () => TabCoordinationOptions][] = [
  ['Web Locks', () => ({ locks: new MemoryLocks(), broadcastChannel: channel })],
  ['BroadcastChannel lease', () => ({ locks: null, broadcastChannel: channel })],
];

/** What a tab's app did: tool calls it answered, transcripts it saved (the README's rules). */
interface AppLog {
  calls: string[];
  saves: { tab: string; texts: string[] }[];
}

/** The README's plain path, with the documented guards (`isFollowingTurn()`, `!isAbort`). */
function openPlainTab(
  name: string,
  chatId: string,
  tabs: TabCoordinationOptions,
  log: AppLog,
  recorder: ReturnType<typeof recordingFetch>,
  pages: Record<string, MountedPlainChat | undefined>,
) {
  const { persistence: _memory, ...shared } = sessionOptions(server, chatId);
  const page = mountPlainChat({
    session: { ...shared, persistence: 'local', tabs, fetch: recorder.fetch },
    chat: {
      resume: true,
      sendAutomaticallyWhen: (input) =>
        pages[name]?.session.isFollowingTurn() === true
          ? false
          : lastAssistantMessageIsCompleteWithToolCalls(input),
      onToolCall: ({ toolCall }) => {
        const current = pages[name];
        if (current === undefined || current.session.isFollowingTurn()) return;
        log.calls.push(name);
        void current.chat.addToolOutput({
          tool: 'askUser' as never,
          toolCallId: toolCall.toolCallId,
          output: `green from ${name}` as never,
        });
      },
      onFinish: ({ messages, isAbort, isError }) => {
        if (isAbort || isError || pages[name]?.session.isFollowingTurn() === true) return;
        log.saves.push({ tab: name, texts: textOf(messages as UIMessage[]) });
      },
    },
  });
  pages[name] = page;
  return page;
}

/** `useDurableChat` (it guards its callbacks itself). */
function openDurableTab(
  name: string,
  chatId: string,
  tabs: TabCoordinationOptions,
  log: AppLog,
  recorder: ReturnType<typeof recordingFetch>,
  pages: Record<string, MountedChat | undefined>,
  overrides: Partial<UseDurableChatOptions> = {},
) {
  const { persistence: _memory, retry: _shortened, ...options } = chatOptions(server, chatId);
  const page = mountChat({
    ...options,
    persistence: 'local',
    tabs,
    fetch: recorder.fetch,
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
    onToolCall: ({ toolCall }) => {
      log.calls.push(name);
      void pages[name]?.current.addToolOutput({
        tool: 'askUser' as never,
        toolCallId: toolCall.toolCallId,
        output: `green from ${name}` as never,
      });
    },
    onFinish: ({ messages, isAbort, isError }) => {
      if (isAbort || isError) return;
      log.saves.push({ tab: name, texts: textOf(messages) });
    },
    ...overrides,
  });
  pages[name] = page;
  return page;
}

const ASK = '/ask favourite colour?';

describe.each(coordinations)(
  'item 3 (%s): a tab opened while another tab’s tool-call turn is live',
  (_mode, coordination) => {
    it('useChat + useChatSession + useFollowTurns: the opened tab follows; the tool runs once, in the owner; only the owner saves', async () => {
      const chatId = nextChatId('plain-open-mid-turn');
      const tabs = coordination();
      const log: AppLog = { calls: [], saves: [] };
      const recorder = recordingFetch();
      const pages: Record<string, MountedPlainChat | undefined> = {};
      const owner = openPlainTab('owner', chatId, tabs, log, recorder, pages);
      const paused = pauseTurn(chatId, ASK, 2); // after start and start-step: the tool call not yet out
      void owner.chat.sendMessage({ text: ASK });
      await waitForDom(() => expect(paused.reached).toBe(true), { timeout: 5_000 });
      await waitForDom(() => expect(owner.session.state.turnLive).toBe(true));
      const opened = openPlainTab('opened', chatId, tabs, log, recorder, pages);
      await waitForDom(() => expect(opened.session.tab.following).toBe(true));
      paused.release();
      const expected = [
        'user: /ask favourite colour?',
        'assistant: [tool-askUser]You answered: green from owner',
      ];
      await waitForDom(() => expect(owner.transcript()).toEqual(expected), { timeout: 5_000 });
      await waitForDom(() => expect(opened.transcript().at(-1)).toEqual(expected[1]), { timeout: 5_000 });
      await waitForDom(() => expect([owner.chat.status, opened.chat.status]).toEqual(['ready', 'ready']));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(log.calls).toEqual(['owner']);
      expect(appends(recorder.requests)).toHaveLength(2); // the user's message and one tool output
      expect(log.saves.map((save) => save.tab)).not.toContain('opened');
      owner.unmount();
      opened.unmount();
    });

    it('useDurableChat: the opened tab follows; the tool runs once, in the owner; only the owner saves', async () => {
      const chatId = nextChatId('durable-open-mid-turn');
      const tabs = coordination();
      const log: AppLog = { calls: [], saves: [] };
      const recorder = recordingFetch();
      const pages: Record<string, MountedChat | undefined> = {};
      const owner = openDurableTab('owner', chatId, tabs, log, recorder, pages);
      const paused = pauseTurn(chatId, ASK, 2);
      void owner.run((current) => current.sendMessage({ text: ASK }));
      await waitForDom(() => expect(paused.reached).toBe(true), { timeout: 5_000 });
      await waitForDom(() => expect(owner.current.session.state.turnLive).toBe(true));
      const opened = openDurableTab('opened', chatId, tabs, log, recorder, pages);
      await waitForDom(() => expect(opened.current.session.tab.following).toBe(true));
      paused.release();
      const expected = [
        'user: /ask favourite colour?',
        'assistant: [tool-askUser]You answered: green from owner',
      ];
      await waitForDom(() => expect(owner.transcript()).toEqual(expected), { timeout: 5_000 });
      await waitForDom(() => expect(opened.transcript().at(-1)).toEqual(expected[1]), { timeout: 5_000 });
      await waitForDom(() =>
        expect([owner.current.status, opened.current.status]).toEqual(['ready', 'ready']),
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(log.calls).toEqual(['owner']);
      expect(appends(recorder.requests)).toHaveLength(2);
      expect(log.saves.map((save) => save.tab)).not.toContain('opened');
      owner.unmount();
      opened.unmount();
    });
  },
);

/** Which of two tabs' sends went through: the loser hears TURN_IN_OTHER_TAB, once. */
function refusalsOf(errors: { tab: string; error: unknown }[]) {
  return errors.map(({ tab, error }) => ({ tab, code: (error as { code?: string }).code }));
}

const RACE_REPLY = (text: string) => `assistant: Echo: ${Array(10).fill(text).join(' ')}`;

describe.each(coordinations)('item 4 (%s): two tabs send at the same moment', (_mode, coordination) => {
  it('useChat + useChatSession + useFollowTurns: the losing tab drops its unsent message, shows the winner’s turn and ends with the same transcript', async () => {
    const chatId = nextChatId('plain-race');
    const tabs = coordination();
    const log: AppLog = { calls: [], saves: [] };
    const recorder = recordingFetch();
    const pages: Record<string, MountedPlainChat | undefined> = {};
    const errors: { tab: string; error: unknown }[] = [];
    const open = (name: string) => {
      const { persistence: _memory, ...shared } = sessionOptions(server, chatId);
      const page = mountPlainChat({
        session: {
          ...shared,
          persistence: 'local',
          tabs,
          fetch: recorder.fetch,
          clientData: { delayMs: 10, repeat: 10 },
        },
        chat: {
          resume: true,
          onError: (error) => errors.push({ tab: name, error }),
          onFinish: ({ messages, isAbort, isError }) => {
            if (isAbort || isError || pages[name]?.session.isFollowingTurn() === true) return;
            log.saves.push({ tab: name, texts: textOf(messages as UIMessage[]) });
          },
        },
      });
      pages[name] = page;
      return page;
    };
    const a = open('a');
    const b = open('b');
    await waitForDom(() => expect([a.session.tab.mode, b.session.tab.mode]).not.toContain('none'));
    void a.chat.sendMessage({ text: 'from a' });
    void b.chat.sendMessage({ text: 'from b' });
    await waitForDom(() => expect(errors).toHaveLength(1), { timeout: 5_000 });
    const [{ tab: loser } = { tab: '' }] = errors;
    const winner = loser === 'a' ? 'b' : 'a';
    expect(refusalsOf(errors)).toEqual([{ tab: loser, code: 'TURN_IN_OTHER_TAB' }]);
    const expected = [`user: from ${winner}`, RACE_REPLY(`from ${winner}`)];
    await waitForDom(() => expect(pages[winner]?.transcript()).toEqual(expected), { timeout: 5_000 });
    await waitForDom(() => expect(pages[loser]?.transcript()).toEqual(expected), { timeout: 5_000 });
    await waitForDom(() => expect([a.chat.status, b.chat.status]).toEqual(['ready', 'ready']));
    expect(appends(recorder.requests)).toHaveLength(1);
    expect(log.saves).toEqual([
      { tab: winner, texts: [`from ${winner}`, RACE_REPLY(`from ${winner}`).slice(11)] },
    ]);
    a.unmount();
    b.unmount();
  });

  it('useDurableChat: the losing tab drops its unsent message, shows the winner’s turn and ends with the same transcript', async () => {
    const chatId = nextChatId('durable-race');
    const tabs = coordination();
    const log: AppLog = { calls: [], saves: [] };
    const recorder = recordingFetch();
    const pages: Record<string, MountedChat | undefined> = {};
    const errors: { tab: string; error: unknown }[] = [];
    const open = (name: string) =>
      openDurableTab(name, chatId, tabs, log, recorder, pages, {
        clientData: { delayMs: 10, repeat: 10 },
        onError: (error) => errors.push({ tab: name, error }),
      });
    const a = open('a');
    const b = open('b');
    await waitForDom(() =>
      expect([a.current.session.tab.mode, b.current.session.tab.mode]).not.toContain('none'),
    );
    void a.run((current) => current.sendMessage({ text: 'from a' }));
    void b.run((current) => current.sendMessage({ text: 'from b' }));
    await waitForDom(() => expect(errors).toHaveLength(1), { timeout: 5_000 });
    const [{ tab: loser } = { tab: '' }] = errors;
    const winner = loser === 'a' ? 'b' : 'a';
    expect(refusalsOf(errors)).toEqual([{ tab: loser, code: 'TURN_IN_OTHER_TAB' }]);
    const expected = [`user: from ${winner}`, RACE_REPLY(`from ${winner}`)];
    await waitForDom(() => expect(pages[winner]?.transcript()).toEqual(expected), { timeout: 5_000 });
    await waitForDom(() => expect(pages[loser]?.transcript()).toEqual(expected), { timeout: 5_000 });
    await waitForDom(() => expect([a.current.status, b.current.status]).toEqual(['ready', 'ready']));
    expect(appends(recorder.requests)).toHaveLength(1);
    expect(log.saves).toEqual([
      { tab: winner, texts: [`from ${winner}`, RACE_REPLY(`from ${winner}`).slice(11)] },
    ]);
    a.unmount();
    b.unmount();
  });
});
