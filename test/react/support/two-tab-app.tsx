// Two tabs of one app on one chat, on either React path, written as the README says: the
// transcript is saved in `onFinish` (not when aborted, failed or following another tab's turn)
// and loaded back as `messages` when a tab opens or reloads; tool approvals are answered with
// `sendAutomaticallyWhen`. Used by the tab tests that reload one tab during the other's turn.
import { BroadcastChannel as NodeBroadcastChannel } from 'node:worker_threads';
import { waitFor as waitForDom } from '@testing-library/react';
import { lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from 'ai';
import { expect } from 'vitest';
import type { DevServer } from '../../../src/dev-server/index.js';
import type { BroadcastChannelLike } from '../../../src/session/tab-channel.js';
import type { TabCoordinationOptions } from '../../../src/session/tab-coordinator.js';
import { MemoryLocks } from '../../session/support/memory-locks.js';
import { chatOptions, mountChat, nextChatId, recordingFetch } from './harness.js';
import { mountPlainChat, sessionOptions } from './plain-harness.js';

/** Node's BroadcastChannel: tabs in one test process hear each other, as a browser's do. */
export const nodeChannel = (name: string) =>
  new NodeBroadcastChannel(name) as unknown as BroadcastChannelLike;

/** What either React path offers the test: one tab. */
export interface Tab {
  transcript(): string[];
  messages(): UIMessage[];
  status(): string;
  error(): Error | undefined;
  /** The hook's tab state (`session.tab`). */
  tab(): { owner: boolean; following: boolean };
  send(text: string): void;
  approve(id: string): Promise<void>;
  /** The user's Stop button. */
  stop(): void;
  /** `stop()` called in code (`useDurableChat().stop()`, `useChatSession().stop()`): also where no Stop button shows. */
  stopInCode(): Promise<void>;
  unmount(): void;
}

/** What the app keeps across tabs and reloads: its saved transcript, who saved, what failed. */
/** The id of the tool approval the tab's last message asks for (the `confirm` tool), while it asks. */
export function approvalId(tab: Pick<Tab, 'messages'>): string | undefined {
  const part = tab
    .messages()
    .at(-1)
    ?.parts.find((candidate) => candidate.type === 'tool-confirm') as
    | { state: string; approval?: { id: string } }
    | undefined;
  return part?.state === 'approval-requested' ? part.approval?.id : undefined;
}

export interface App {
  saved: UIMessage[];
  saves: string[];
  errors: { tab: string; error: unknown }[];
  recorder: ReturnType<typeof recordingFetch>;
}

export const newApp = (): App => ({ saved: [], saves: [], errors: [], recorder: recordingFetch() });

/** `startUntil`: the tab's session start (its token: a reloaded page has none) waits for it. */
export type Open = (
  name: string,
  chatId: string,
  tabs: TabCoordinationOptions,
  app: App,
  startUntil?: Promise<void>,
) => Tab;

type StartSession = NonNullable<ReturnType<typeof chatOptions>['startSession']>;
const heldStart = (start: StartSession | undefined, until: Promise<void> | undefined): StartSession => {
  if (start === undefined) throw new Error('the harness gives every tab a startSession');
  if (until === undefined) return start;
  return async (...args: Parameters<StartSession>) => {
    await until;
    return start(...args);
  };
};

/** The two paths' `open`, against `server()` (read when a tab opens: servers start in `beforeAll`). */
export function twoTabPaths(server: () => DevServer): [string, Open][] {
  const openDurable: Open = (name, chatId, tabs, app, startUntil) => {
    const { persistence: _memory, retry: _shortened, ...options } = chatOptions(server(), chatId);
    const chat = mountChat({
      ...options,
      startSession: heldStart(options.startSession, startUntil),
      persistence: 'local',
      tabs,
      fetch: app.recorder.fetch,
      clientData: { delayMs: 5 },
      messages: structuredClone(app.saved),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
      onError: (error) => app.errors.push({ tab: name, error }),
      onFinish: ({ messages, isAbort, isError }) => {
        if (isAbort || isError) return;
        app.saved = structuredClone(messages);
        app.saves.push(name);
      },
    });
    return {
      transcript: () => chat.transcript(),
      messages: () => chat.current.messages,
      status: () => chat.current.status,
      error: () => chat.current.error,
      tab: () => chat.current.session.tab,
      send: (text) =>
        void chat.run((current) => current.sendMessage({ text })).catch(() => undefined /* onError has it */),
      approve: (id) =>
        chat.run(async (current) => {
          await current.addToolApprovalResponse({ id, approved: true });
        }),
      stop: () => void chat.run((current) => current.stop()),
      stopInCode: () => chat.run((current) => current.stop()),
      unmount: () => chat.unmount(),
    };
  };

  const openPlain: Open = (name, chatId, tabs, app, startUntil) => {
    const { persistence: _memory, ...shared } = sessionOptions(server(), chatId);
    const holder: { page?: ReturnType<typeof mountPlainChat> } = {};
    const following = () => holder.page?.session.isFollowingTurn() === true;
    const page = mountPlainChat({
      session: {
        ...shared,
        startSession: heldStart(shared.startSession, startUntil),
        persistence: 'local',
        tabs,
        fetch: app.recorder.fetch,
        clientData: { delayMs: 5 },
      },
      chat: {
        resume: true,
        messages: structuredClone(app.saved),
        sendAutomaticallyWhen: (input) =>
          !following() && lastAssistantMessageIsCompleteWithApprovalResponses(input),
        onError: (error) => app.errors.push({ tab: name, error }),
        onFinish: ({ messages, isAbort, isError }) => {
          if (isAbort || isError || following()) return;
          app.saved = structuredClone(messages as UIMessage[]);
          app.saves.push(name);
        },
      },
    });
    holder.page = page;
    return {
      transcript: () => page.transcript(),
      messages: () => page.chat.messages as UIMessage[],
      status: () => page.chat.status,
      error: () => page.chat.error,
      tab: () => page.session.tab,
      send: (text) => void page.chat.sendMessage({ text }).catch(() => undefined /* onError has it */),
      approve: async (id) => {
        await page.chat.addToolApprovalResponse({ id, approved: true });
      },
      stop: () => void page.chat.stop(),
      stopInCode: () => page.session.stop(),
      unmount: () => page.unmount(),
    };
  };

  return [
    ['useChat + useChatSession + useFollowTurns', openPlain],
    ['useDurableChat', openDurable],
  ];
}

/**
 * Reloads `tab` as a page that fetches its token first: the new tab's session start waits until
 * `letStart` is called (`reopen` opens it with that wait).
 */
export function reloadSlowly(
  tab: Tab,
  reopen: (startUntil: Promise<void>) => Tab,
): { tab: Tab; letStart: () => void } {
  let letStart = () => {};
  const started = new Promise<void>((resolve) => {
    letStart = resolve;
  });
  tab.unmount();
  return { tab: reopen(started), letStart };
}

/** The record key of `chatId` in this window's localStorage, once there is one. */
export function recordKey(chatId: string): string | undefined {
  for (let index = 0; index < localStorage.length; index += 1) {
    const key = localStorage.key(index);
    if (key?.endsWith(chatId) === true) return key;
  }
  return undefined;
}

/**
 * Tells the window of every change of the chat's record, as a browser tells the other tabs
 * (happy-dom fires no `storage` event within one window; here every tab hears it, the writer too).
 */
export function relayStorageEvents(chatId: string): () => void {
  let last: string | null = null;
  const timer = setInterval(() => {
    const key = recordKey(chatId);
    const value = key === undefined ? null : localStorage.getItem(key);
    if (key === undefined || value === last || value === null) return;
    last = value;
    window.dispatchEvent(new StorageEvent('storage', { key, newValue: value, storageArea: localStorage }));
  }, 10);
  return () => clearInterval(timer);
}

/** The tab coordination of a `mode` cell: Web Locks (in memory) or the BroadcastChannel lease. */
export const tabsFor = (mode: string): TabCoordinationOptions => ({
  locks: mode === 'Web Locks' ? new MemoryLocks() : null,
  broadcastChannel: nodeChannel,
});

/** Two tabs open on a new chat, `owner` and `other`, each with its own app; `other` is ready. */
export async function openTwoTabs(open: Open, mode: string, name: string) {
  const chatId = nextChatId(name);
  const tabs = tabsFor(mode);
  const ownerApp = newApp();
  const otherApp = newApp();
  const owner = open('owner', chatId, tabs, ownerApp);
  const other = open('other', chatId, tabs, otherApp);
  await waitForDom(() => expect(other.status()).toBe('ready'));
  return { chatId, tabs, owner, other, ownerApp, otherApp };
}
