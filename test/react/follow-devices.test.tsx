// @vitest-environment happy-dom

import { BroadcastChannel as NodeBroadcastChannel } from 'node:worker_threads';
import { useChat } from '@ai-sdk/react';
import { render } from '@testing-library/react';
import type { UIMessage } from 'ai';
import { StrictMode } from 'react';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PersistedChatRecord } from '../../src/client/persistence.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { type UseChatSessionResult, useChatSession } from '../../src/react/use-chat-session.js';
import { useFollowTurns } from '../../src/react/use-follow-turns.js';
import {
  type UseWatchChatOptions,
  type UseWatchChatResult,
  useWatchChat,
} from '../../src/react/use-watch-chat.js';
import { createRouteSessionCallbacks } from '../../src/route-client/create-route-session-callbacks.js';
import { createChatRouteHandler } from '../../src/server/chat-route-handler.js';
import type { ChatSessionOptions } from '../../src/session/chat-session-options.js';
import type { BroadcastChannelLike } from '../../src/session/tab-channel.js';
import { hostFetchHandler, type Listening } from '../server/support/listen.js';
import { MemoryLocks } from '../session/support/memory-locks.js';
import { nextChatId, nodeFetch, startEchoServer, transcript, waitFor } from './support/harness.js';
import { sessionOptions } from './support/plain-harness.js';

let server: DevServer;
let route: Listening;
beforeAll(async () => {
  server = await startEchoServer();
  route = await hostFetchHandler(
    createChatRouteHandler({
      baseURL: server.url,
      secretKey: server.secretKey,
      taskIdentifier: 'echo',
      authorize: () => true,
      onError: () => {},
    }),
  );
});
afterAll(async () => {
  await route.close();
  await server.close();
});

const SLOW_REPLY = { delayMs: 15, repeat: 10 };
const assistants = (messages: readonly UIMessage[]) =>
  transcript(messages.filter((m) => m.role === 'assistant'));

interface Device {
  session: UseChatSessionResult;
  chat: ReturnType<typeof useChat>;
}

function DeviceChat({ options, seen }: { options: ChatSessionOptions; seen: { device?: Device } }) {
  const session = useChatSession(options);
  const chat = useChat({ id: session.id, transport: session.transport, resume: true });
  useFollowTurns(session, chat, { otherDevices: true });
  seen.device = { session, chat };
  return null;
}

function WatchView({
  options,
  seen,
}: {
  options: UseWatchChatOptions;
  seen: { viewer?: UseWatchChatResult };
}) {
  seen.viewer = useWatchChat(options);
  return null;
}

/**
 * One device: `useChatSession` + `useChat` + `useFollowTurns(..., { otherDevices: true })`, its
 * own storage. `tab`: a tab of a browser instead, sharing its localStorage and tab channels.
 */
function mountDevice(
  chatId: string,
  tab?: Partial<ChatSessionOptions>,
): { readonly current: Device; unmount(): void } {
  const seen: { device?: Device } = {};
  const records = new Map<string, PersistedChatRecord>();
  const options = sessionOptions(server, chatId, records, { clientData: SLOW_REPLY, ...tab });
  const view = render(
    <StrictMode>
      <DeviceChat options={options} seen={seen} />
    </StrictMode>,
  );
  return {
    get current() {
      if (seen.device === undefined) throw new Error('not rendered');
      return seen.device;
    },
    unmount: () => view.unmount(),
  };
}

const channel = (name: string) => new NodeBroadcastChannel(name) as unknown as BroadcastChannelLike;

describe('following turns of other devices', () => {
  it('with otherDevices on, a second tab of the same browser still follows as a tab: with the user message', async () => {
    const chatId = nextChatId('tabs-and-devices');
    const tabs = { locks: new MemoryLocks(), broadcastChannel: channel };
    const first = mountDevice(chatId, { persistence: 'local', tabs });
    await first.current.session.preload();
    const second = mountDevice(chatId, { persistence: 'local', tabs });
    await waitFor(() => second.current.session.state.hydrated);
    void first.current.chat.sendMessage({ text: 'from the first tab' });
    await waitFor(
      () => first.current.chat.status === 'ready' && first.current.chat.messages.length === 2,
      10_000,
    );
    await waitFor(
      () => second.current.chat.status === 'ready' && second.current.chat.messages.length === 2,
      10_000,
    );
    expect(second.current.chat.messages).toEqual(first.current.chat.messages);
    first.unmount();
    second.unmount();
  });

  it('useFollowTurns({ otherDevices }) shows a reply started on another device, and that device can then send its own turn', async () => {
    const chatId = nextChatId('devices');
    const laptop = mountDevice(chatId);
    await laptop.current.chat.sendMessage({ text: 'before the phone' });
    await waitFor(() => laptop.current.chat.status === 'ready', 10_000, "the laptop's first reply");
    // The phone opens the chat afterwards: it has the session, nothing sent, nothing stored.
    const phone = mountDevice(chatId);
    await phone.current.session.preload();

    void laptop.current.chat.sendMessage({ text: 'from the laptop' });
    await waitFor(() => phone.current.session.isFollowingTurn(), 10_000, 'the phone to follow the turn');
    await waitFor(
      () => laptop.current.chat.status === 'ready' && assistants(laptop.current.chat.messages).length === 2,
      10_000,
      "the laptop's reply",
    );
    await waitFor(
      () => phone.current.chat.status === 'ready' && assistants(phone.current.chat.messages).length === 1,
      10_000,
      'the reply on the phone',
    );
    // The live turn only: the turn that had ended before the phone came is the app's history to load.
    expect(phone.current.chat.messages).toEqual([laptop.current.chat.messages.at(-1)]);

    // The phone sends: the turn is its own (it is not following), and the laptop follows it.
    void phone.current.chat.sendMessage({ text: 'from the phone' });
    await waitFor(() => phone.current.chat.status === 'streaming', 10_000, "the phone's own reply");
    expect(phone.current.session.isFollowingTurn()).toBe(false);
    await waitFor(
      () => phone.current.chat.status === 'ready' && assistants(phone.current.chat.messages).length === 2,
      10_000,
      "the phone's reply",
    );
    await waitFor(
      () => laptop.current.chat.status === 'ready' && assistants(laptop.current.chat.messages).length === 3,
      10_000,
      'the reply on the laptop',
    );
    expect(assistants(laptop.current.chat.messages).slice(1)).toEqual(
      assistants(phone.current.chat.messages),
    );
    expect(transcript(phone.current.chat.messages).slice(-2)).toEqual([
      'user: from the phone',
      expect.stringMatching(/^assistant: Echo: from the phone/),
    ]);
    laptop.unmount();
    phone.unmount();
  });

  it('useWatchChat: a pure viewer with a read-only token shows every turn live', async () => {
    const chatId = nextChatId('viewer');
    const laptop = mountDevice(chatId);
    const routes = createRouteSessionCallbacks({ endpoint: route.url, fetch: nodeFetch });
    const seen: { viewer?: UseWatchChatResult } = {};
    const options = { baseURL: server.url, chatId, getAccessToken: routes.getWatchToken, fetch: nodeFetch };
    const view = render(
      <StrictMode>
        <WatchView options={options} seen={seen} />
      </StrictMode>,
    );
    const viewer = () => {
      if (seen.viewer === undefined) throw new Error('not rendered');
      return seen.viewer;
    };
    void laptop.current.chat.sendMessage({ text: 'watch this' });
    await waitFor(() => viewer().turnLive, 10_000, 'the viewer to see the live turn');
    await waitFor(
      () => laptop.current.chat.status === 'ready' && !viewer().turnLive && viewer().messages.length === 1,
      10_000,
      'the reply on the viewer',
    );
    expect(viewer().messages).toEqual(laptop.current.chat.messages.filter((m) => m.role === 'assistant'));
    void laptop.current.chat.sendMessage({ text: 'and this' });
    await waitFor(() => viewer().messages.length === 2 && !viewer().turnLive, 10_000, 'the second reply');
    await waitFor(() => laptop.current.chat.status === 'ready');
    expect(assistants(viewer().messages)).toEqual(assistants(laptop.current.chat.messages));
    expect(viewer().phase).toEqual({ type: 'following' });
    view.unmount();
    laptop.unmount();
    await waitFor(() => viewer().follower.getState().phase.type === 'stopped', 2_000, 'the viewer to stop');
  });
});
