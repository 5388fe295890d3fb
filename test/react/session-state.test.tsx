// @vitest-environment happy-dom
import { useChat } from '@ai-sdk/react';
import { render, waitFor as waitForDom } from '@testing-library/react';
import { renderToString } from 'react-dom/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PersistedChatRecord, SessionPersistence } from '../../src/client/persistence.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { type UseChatSessionResult, useChatSession } from '../../src/react/use-chat-session.js';
import type { UseDurableChatOptions } from '../../src/react/use-durable-chat.js';
import { useSessionState } from '../../src/react/use-session-state.js';
import type { ChatSessionOptions } from '../../src/session/chat-session-options.js';
import { startSessionVia } from '../transport/support/dev-server-fixture.js';
import { chatOptions, mountChat, nextChatId, recordingFetch, startEchoServer } from './support/harness.js';

let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer();
});
afterAll(async () => {
  await server.close();
});

function counter() {
  return { renders: 0, values: [] as unknown[] };
}

function Watcher<T>({
  chatId,
  select,
  seen,
}: {
  chatId: string;
  select: (state: never) => T;
  seen: ReturnType<typeof counter>;
}) {
  const value = useSessionState(chatId, select as never);
  seen.renders += 1;
  seen.values.push(value);
  return null;
}

function ServerPage({ fetch }: { fetch: typeof globalThis.fetch }) {
  const session = useChatSession({ ...chatOptions(server, 'ssr-chat'), fetch });
  const status = useSessionState('ssr-chat', (state) => state.status.type);
  return (
    <p>
      {status}/{String(session.state.hydrated)}/{String(session.state.sessionId)}
    </p>
  );
}

function OwnChatPage({
  options,
  onRender,
}: {
  options: ChatSessionOptions;
  onRender: (session: UseChatSessionResult, chat: ReturnType<typeof useChat>) => void;
}) {
  const session = useChatSession(options);
  const chat = useChat({ id: options.chatId, transport: session.transport });
  onRender(session, chat);
  return null;
}

describe('useSessionState', () => {
  it('re-renders only when the selected value changes', async () => {
    const chatId = nextChatId('select');
    const bySession = counter();
    const byCursor = counter();
    render(
      <>
        <Watcher
          chatId={chatId}
          select={(state: { sessionId: string | undefined }) => state.sessionId}
          seen={bySession}
        />
        <Watcher
          chatId={chatId}
          select={(state: { lastEventId: number | undefined }) => state.lastEventId}
          seen={byCursor}
        />
      </>,
    );
    const chat = mountChat(chatOptions(server, chatId, undefined, { clientData: { delayMs: 5, repeat: 6 } }));
    await chat.run((current) => current.sendMessage({ text: 'count my renders' }));
    await waitForDom(() => expect(chat.current.status).toBe('ready'));
    await waitForDom(() => expect(byCursor.values.at(-1)).toBe(chat.current.session.state.lastEventId));
    expect(new Set(bySession.values).size).toBe(2); // undefined, then the session id
    expect(bySession.renders).toBe(2);
    expect(byCursor.renders).toBeGreaterThan(bySession.renders);
    chat.unmount();
  });

  it('a selector returning a fresh object each time does not loop (shallow equality by default)', async () => {
    const chatId = nextChatId('shallow');
    const seen = counter();
    render(
      <Watcher
        chatId={chatId}
        select={(state: { closed: boolean; turnLive: boolean }) => ({
          closed: state.closed,
          live: state.turnLive,
        })}
        seen={seen}
      />,
    );
    const chat = mountChat(chatOptions(server, chatId));
    await chat.run((current) => current.sendMessage({ text: 'objects' }));
    await waitForDom(() => expect(chat.current.status).toBe('ready'));
    expect(seen.values.at(-1)).toEqual({ closed: false, live: false });
    expect(seen.renders).toBeLessThan(8);
    chat.unmount();
  });

  it('server rendering reads the initial state and makes no request', () => {
    const recorder = recordingFetch();
    expect(renderToString(<ServerPage fetch={recorder.fetch} />)).toBe(
      '<p>idle<!-- -->/<!-- -->false<!-- -->/<!-- -->undefined</p>',
    );
    expect(recorder.requests).toEqual([]);
  });
});

describe('useChatSession with your own useChat', () => {
  it('exposes the session state and a transport useChat can use', async () => {
    const chatId = nextChatId('own-usechat');
    const seen: { session?: UseChatSessionResult; chat?: ReturnType<typeof useChat> } = {};
    render(
      <OwnChatPage
        options={chatOptions(server, chatId)}
        onRender={(session, chat) => {
          seen.session = session;
          seen.chat = chat;
        }}
      />,
    );
    await waitForDom(() => expect(seen.session?.state.hydrated).toBe(true));
    await seen.chat?.sendMessage({ text: 'own chat' });
    await waitForDom(() => expect(seen.chat?.status).toBe('ready'));
    const state = seen.session?.state;
    expect(state).toMatchObject({
      chatId,
      sessionId: expect.stringMatching(/^session_/),
      runId: expect.stringMatching(/^run_/),
      status: { type: 'idle' },
      closed: false,
      closedReason: null,
      turnLive: false,
    });
    expect(state?.lastEventId).toBeGreaterThan(0);
    expect(state?.tokenExpiresAt).toBeGreaterThan(Date.now());
    expect(JSON.stringify(state)).not.toContain('eyJ'); // no token in the React state
    expect(seen.session?.tab).toEqual({ mode: 'none', owner: false, following: false });
  });
});

describe('persistence', () => {
  const baseOptions = (chatId: string, overrides: Partial<UseDurableChatOptions>) => {
    const { persistence: _memory, ...rest } = chatOptions(server, chatId);
    return { ...rest, ...overrides };
  };

  it("'local' (the default) keeps the record in localStorage", async () => {
    const chatId = nextChatId('local');
    const chat = mountChat(baseOptions(chatId, {}));
    await chat.run((current) => current.sendMessage({ text: 'kept locally' }));
    await waitForDom(() => expect(chat.current.status).toBe('ready'));
    await chat.current.session.sessionTransport.getClient(chatId).flushPersistence();
    const stored = JSON.parse(
      localStorage.getItem(`durable-chat:${chatId}`) ?? 'null',
    ) as PersistedChatRecord;
    expect(stored).toMatchObject({
      version: 1,
      chatId,
      sessionId: chat.current.session.state.sessionId,
      turnLive: false,
    });
    chat.unmount();
  });

  it("'session' uses sessionStorage; false stores nothing", async () => {
    const inSession = nextChatId('session');
    const nowhere = nextChatId('nowhere');
    const first = mountChat(baseOptions(inSession, { persistence: 'session' }));
    const second = mountChat(baseOptions(nowhere, { persistence: false }));
    await first.run((current) => current.sendMessage({ text: 'a' }));
    await second.run((current) => current.sendMessage({ text: 'b' }));
    await waitForDom(() => expect([first.current.status, second.current.status]).toEqual(['ready', 'ready']));
    await first.current.session.sessionTransport.getClient(inSession).flushPersistence();
    expect(sessionStorage.getItem(`durable-chat:${inSession}`)).toContain(inSession);
    expect(localStorage.getItem(`durable-chat:${inSession}`)).toBeNull();
    expect(localStorage.getItem(`durable-chat:${nowhere}`)).toBeNull();
    expect(sessionStorage.getItem(`durable-chat:${nowhere}`)).toBeNull();
    first.unmount();
    second.unmount();
  });

  it("'memory' with a scope survives a remount in the same page (no second session start)", async () => {
    const chatId = nextChatId('memory');
    const starts = { calls: 0 };
    const options = baseOptions(chatId, {
      persistence: 'memory',
      scope: 'user-1',
      startSession: startSessionVia(server, starts),
    });
    const first = mountChat(options);
    await first.run((current) => current.sendMessage({ text: 'one' }));
    await waitForDom(() => expect(first.current.status).toBe('ready'));
    const sessionId = first.current.session.state.sessionId;
    first.unmount();
    const second = mountChat(options);
    await waitForDom(() => expect(second.current.session.state.sessionId).toBe(sessionId));
    await second.run((current) => current.sendMessage({ text: 'two' }));
    await waitForDom(() => expect(second.transcript()).toEqual(['user: two', 'assistant: Echo: two']));
    expect(starts.calls).toBe(1);
    second.unmount();
  });

  it('an async adapter of your own (e.g. a server action) carries a reload mid-turn', async () => {
    const chatId = nextChatId('async');
    const backend = new Map<string, string>();
    const later = <T,>(value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), 5));
    const adapter: SessionPersistence = {
      load: (id) => later(backend.get(id)),
      save: async (id, record) => {
        await later(undefined);
        backend.set(id, JSON.stringify(record));
      },
      remove: async (id) => {
        backend.delete(id);
      },
    };
    const first = mountChat(
      baseOptions(chatId, { persistence: adapter, clientData: { delayMs: 25, repeat: 10 } }),
    );
    void first.run((current) => current.sendMessage({ text: 'async adapter' }));
    await waitForDom(() => expect((first.transcript()[1] ?? '').length).toBeGreaterThan(20));
    await first.current.session.sessionTransport.getClient(chatId).flushPersistence();
    const user = first.current.messages[0];
    first.unmount();
    const second = mountChat(
      baseOptions(chatId, { persistence: adapter, messages: user === undefined ? [] : [user] }),
    );
    await waitForDom(() =>
      expect(second.transcript()).toEqual([
        'user: async adapter',
        `assistant: Echo: ${Array(10).fill('async adapter').join(' ')}`,
      ]),
    );
    second.unmount();
  });
});
