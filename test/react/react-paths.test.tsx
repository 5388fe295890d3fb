// @vitest-environment happy-dom
// Issue 19: what React and Next.js apps do to a chat (clear an error, pass options inline,
// navigate in a transition, leave and come back), on both React paths, with default options.
import { useChat } from '@ai-sdk/react';
import { render, waitFor as waitForDom } from '@testing-library/react';
import type { UIMessage } from 'ai';
import { Component, type ReactNode, Suspense, startTransition, useEffect } from 'react';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryPersistence, type PersistedChatRecord } from '../../src/client/persistence.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { type UseChatSessionResult, useChatSession } from '../../src/react/use-chat-session.js';
import { type UseDurableChatOptions, useDurableChat } from '../../src/react/use-durable-chat.js';
import type { ChatSessionOptions } from '../../src/session/chat-session-options.js';
import { MemoryLocks } from '../session/support/memory-locks.js';
import { startSessionVia } from '../transport/support/dev-server-fixture.js';
import { chatOptions, mountChat, nextChatId, startEchoServer, transcript } from './support/harness.js';
import { mountPlainChat, sessionOptions } from './support/plain-harness.js';

let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer();
});
afterAll(async () => {
  await server.close();
});

class Catch extends Component<
  { onError: (error: unknown) => void; children: ReactNode },
  { failed: boolean }
> {
  override state = { failed: false };
  static getDerivedStateFromError() {
    return { failed: true };
  }
  override componentDidCatch(error: unknown) {
    this.props.onError(error);
  }
  override render() {
    return this.state.failed ? null : this.props.children;
  }
}

interface Seen {
  messages: UIMessage[];
  send?: (text: string) => Promise<void>;
  transports: Set<unknown>;
}

/** `chatOptions` with the library's default retry and timeouts. */
function durableOptions(
  chatId: string,
  overrides: Partial<UseDurableChatOptions> = {},
): UseDurableChatOptions {
  const { retry: _shortened, ...options } = chatOptions(server, chatId);
  return { ...options, ...overrides };
}

describe('item 5: clearError() clears the error status', () => {
  it('useChat + useChatSession: chat.clearError() takes session.status and statusLabel back to Ready', async () => {
    const page = mountPlainChat({ session: sessionOptions(server, nextChatId('plain-clear')) });
    void page.chat.sendMessage({ text: '/error now' });
    await waitForDom(() => expect(page.session.status.type).toBe('error'));
    expect(page.session.statusLabel).toMatch(/^Error: /);
    page.chat.clearError();
    await waitForDom(() => expect(page.chat.status).toBe('ready'));
    await waitForDom(() => expect(page.session.status).toEqual({ type: 'ready' }));
    expect(page.session.statusLabel).toBe('Ready');
    page.unmount();
  });

  it('useDurableChat: clearError() takes sessionStatus and statusLabel back to Ready', async () => {
    const chat = mountChat(durableOptions(nextChatId('durable-clear')));
    void chat.run((current) => current.sendMessage({ text: '/error now' }));
    await waitForDom(() => expect(chat.current.sessionStatus.type).toBe('error'));
    chat.current.clearError();
    await waitForDom(() => expect(chat.current.sessionStatus).toEqual({ type: 'ready' }));
    expect(chat.current.statusLabel).toBe('Ready');
    chat.unmount();
  });
});

interface InlineProps {
  chatId: string;
  records: Map<string, PersistedChatRecord>;
  warnings: string[];
  seen: Seen;
}

function InlinePlain(props: InlineProps) {
  const session = useChatSession({
    ...sessionOptions(server, props.chatId),
    persistence: memoryPersistence(props.records), // inline: another object on every render
    environment: { warn: (message) => props.warnings.push(message) },
  });
  const chat = useChat({ id: session.id, transport: session.transport });
  props.seen.messages = chat.messages as UIMessage[];
  props.seen.send = (text) => chat.sendMessage({ text });
  props.seen.transports.add(session.transport);
  return null;
}

function InlineDurable(props: InlineProps) {
  const chat = useDurableChat({
    ...durableOptions(props.chatId),
    persistence: memoryPersistence(props.records),
    environment: { warn: (message) => props.warnings.push(message) },
  });
  props.seen.messages = chat.messages;
  props.seen.send = (text) => chat.sendMessage({ text });
  props.seen.transports.add(chat.session.transport);
  return null;
}

describe('item 7: a persistence adapter created inline (a new object per render)', () => {
  for (const [path, Inline] of [
    ['useChat + useChatSession', InlinePlain],
    ['useDurableChat', InlineDurable],
  ] as const) {
    it(`${path}: keeps one session (the first adapter), warns once, and the chat works`, async () => {
      const chatId = nextChatId('inline-adapter');
      const records = new Map<string, PersistedChatRecord>();
      const warnings: string[] = [];
      const errors: unknown[] = [];
      const seen: Seen = { messages: [], transports: new Set() };
      const view = render(
        <Catch onError={(error) => errors.push(error)}>
          <Inline chatId={chatId} records={records} warnings={warnings} seen={seen} />
        </Catch>,
      );
      await waitForDom(() => expect(seen.send).toBeDefined());
      await seen.send?.('inline adapter');
      await waitForDom(() =>
        expect(transcript(seen.messages)).toEqual([
          'user: inline adapter',
          'assistant: Echo: inline adapter',
        ]),
      );
      expect(errors).toEqual([]);
      expect(seen.transports.size).toBe(1);
      await waitForDom(() => expect(records.get(chatId)?.sessionId).toMatch(/^session_/));
      expect(warnings.filter((warning) => warning.includes('persistence adapter changed'))).toHaveLength(1);
      view.unmount();
    });
  }
});

/** Suspends until `gate.open()` (a Next.js navigation loading chat B's history, say). */
function suspenseGate() {
  let open = () => {};
  const gate = {
    rendered: 0,
    done: false,
    promise: new Promise<void>((resolve) => {
      open = resolve;
    }),
    open: () => {
      gate.done = true;
      open();
    },
  };
  return gate;
}
type Gate = ReturnType<typeof suspenseGate>;

function Wait({ gate }: { gate: Gate }) {
  if (!gate.done) {
    gate.rendered += 1;
    throw gate.promise;
  }
  return null;
}

/** The session a committed render shows (effects run for committed renders only). */
interface Committed {
  session?: UseChatSessionResult;
}

function PlainShown({ options, committed }: { options: ChatSessionOptions; committed: Committed }) {
  const session = useChatSession(options);
  useChat({ id: session.id, transport: session.transport });
  useEffect(() => {
    committed.session = session;
  });
  return null;
}

function DurableShown({ options, committed }: { options: ChatSessionOptions; committed: Committed }) {
  const chat = useDurableChat(options);
  useEffect(() => {
    committed.session = chat.session;
  });
  return null;
}

describe('item 6: options of a render that has not committed never reach the chat on screen', () => {
  for (const [path, Shown] of [
    ['useChat + useChatSession', PlainShown],
    ['useDurableChat', DurableShown],
  ] as const) {
    it(`${path}: while a transition to chat B is suspended, chat A runs its own startSession, clientData and onEvent`, async () => {
      const a = nextChatId('transition-a');
      const b = nextChatId('transition-b');
      const started: { by: string; clientData: unknown }[] = [];
      const events: { by: string; type: string; chatId: string }[] = [];
      const options = (chatId: string, by: string): ChatSessionOptions => ({
        ...sessionOptions(server, chatId),
        clientData: { page: by },
        startSession: (input) => {
          started.push({ by, clientData: input.clientData });
          return startSessionVia(server)(input);
        },
        onEvent: (event) => events.push({ by, type: event.type, chatId: event.chatId }),
      });
      const committed: Committed = {};
      const page = (chatOptions: ChatSessionOptions, gate?: Gate) => (
        <Suspense fallback={<p>loading</p>}>
          <Shown options={chatOptions} committed={committed} />
          {gate === undefined ? null : <Wait gate={gate} />}
        </Suspense>
      );
      const view = render(page(options(a, 'A')));
      await waitForDom(() => expect(committed.session?.id).toBe(a));
      const shownA = committed.session as UseChatSessionResult;

      const gate = suspenseGate();
      startTransition(() => view.rerender(page(options(b, 'B'), gate)));
      await waitForDom(() => expect(gate.rendered).toBeGreaterThan(0));
      expect(committed.session?.id).toBe(a); // A is still on screen

      // Chat A, on screen, does something that needs its options (no render of A in between).
      await shownA.sendPendingMessage({
        id: 'steer-a',
        role: 'user',
        parts: [{ type: 'text', text: 'in a' }],
      });
      expect(started).toEqual([{ by: 'A', clientData: { page: 'A' } }]);
      await waitForDom(() => expect(events.some((event) => event.type === 'message-sent')).toBe(true));
      expect(events.filter((event) => event.by !== 'A' || event.chatId !== a)).toEqual([]);

      gate.open();
      await waitForDom(() => expect(committed.session?.id).toBe(b));
      view.unmount();
    });
  }
});

describe.each([
  // The default tab coordination here: happy-dom has no Web Locks, Node has a BroadcastChannel.
  { mode: 'BroadcastChannel lease', tabs: () => undefined },
  // What a browser has: Web Locks (one lock manager per page, as there).
  { mode: 'Web Locks', tabs: () => ({ locks: new MemoryLocks() }) },
])(
  'item 9 ($mode): useDurableChat calls onFinish for a reply that completed after the user came back',
  ({ tabs }) => {
    const textOf = (messages: UIMessage[]) =>
      messages.map((message) =>
        message.parts.map((part) => (part.type === 'text' ? part.text : '')).join(''),
      );

    function finishSpy(shown: () => string) {
      const finishes: { chat: string; isAbort: boolean; isError: boolean; texts: string[] }[] = [];
      const onFinish: UseDurableChatOptions['onFinish'] = ({ isAbort, isError, messages }) =>
        finishes.push({ chat: shown(), isAbort, isError, texts: textOf(messages) });
      return { finishes, onFinish };
    }

    const pageTabs = tabs();
    const withTabs = (
      chatId: string,
      records: Map<string, PersistedChatRecord>,
      overrides: Partial<UseDurableChatOptions>,
    ) => durableOptions(chatId, { persistence: memoryPersistence(records), tabs: pageTabs, ...overrides });

    it.each([{ strict: false }, { strict: true }])(
      'unmount mid-reply and mount again (StrictMode: $strict): onFinish once, with the whole reply',
      async ({ strict }) => {
        const chatId = nextChatId('finish-remount');
        const records = new Map<string, PersistedChatRecord>();
        const { finishes, onFinish } = finishSpy(() => chatId);
        const clientData = { delayMs: 20, repeat: 12 };
        const first = mountChat(withTabs(chatId, records, { onFinish, clientData }));
        void first.run((current) => current.sendMessage({ text: 'come back' }));
        await waitForDom(() => expect((first.transcript()[1] ?? '').length).toBeGreaterThan(30));
        await first.current.session.sessionTransport.getClient(chatId).flushPersistence();
        const user = structuredClone(first.current.messages[0]) as UIMessage;
        first.unmount();
        expect(records.get(chatId)).toMatchObject({ turnLive: true });

        const second = mountChat(withTabs(chatId, records, { onFinish, clientData, messages: [user] }), {
          strict,
        });
        const reply = `Echo: ${Array(12).fill('come back').join(' ')}`;
        await waitForDom(
          () => expect(second.transcript()).toEqual(['user: come back', `assistant: ${reply}`]),
          {
            timeout: 5_000,
          },
        );
        await waitForDom(() => expect(finishes).toHaveLength(1));
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(finishes).toEqual([
          { chat: chatId, isAbort: false, isError: false, texts: ['come back', reply] },
        ]);
        second.unmount();
      },
    );

    it('switch to chat B mid-reply and back to A: onFinish once, for chat A', async () => {
      const a = nextChatId('finish-switch-a');
      const b = nextChatId('finish-switch-b');
      const records = new Map<string, PersistedChatRecord>();
      let shown = a;
      const { finishes, onFinish } = finishSpy(() => shown);
      const clientData = { delayMs: 20, repeat: 12 };
      const chat = mountChat(withTabs(a, records, { onFinish, clientData }));
      void chat.run((current) => current.sendMessage({ text: 'switch back' }));
      await waitForDom(() => expect((chat.transcript()[1] ?? '').length).toBeGreaterThan(30));
      await chat.current.session.sessionTransport.getClient(a).flushPersistence();
      const user = structuredClone(chat.current.messages[0]) as UIMessage;

      shown = b;
      chat.update(withTabs(b, records, { onFinish }));
      await waitForDom(() => expect(chat.current.session.id).toBe(b));
      shown = a;
      chat.update(withTabs(a, records, { onFinish, clientData, messages: [user] }));
      const reply = `Echo: ${Array(12).fill('switch back').join(' ')}`;
      await waitForDom(
        () => expect(chat.transcript()).toEqual(['user: switch back', `assistant: ${reply}`]),
        {
          timeout: 5_000,
        },
      );
      await waitForDom(() => expect(finishes).toHaveLength(1));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(finishes).toEqual([{ chat: a, isAbort: false, isError: false, texts: ['switch back', reply] }]);
      chat.unmount();
    });
  },
);

describe('item 1: leaving a chat while its message is still being sent', () => {
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const userMessage = (text: string): UIMessage => ({
    id: `user-${text.length}`,
    role: 'user',
    parts: [{ type: 'text', text }],
  });
  const reply = (text: string, repeat: number) => `assistant: Echo: ${Array(repeat).fill(text).join(' ')}`;

  it.each([
    { moment: 'while the session starts', hold: false },
    { moment: 'while the append is unanswered', hold: true },
  ])(
    'useDurableChat, $moment: the reply resumes when the chat is shown again, and onFinish runs once',
    async ({ hold }) => {
      const chatId = nextChatId('leave-sending');
      const records = new Map<string, PersistedChatRecord>();
      const finishes: { isAbort: boolean; isError: boolean }[] = [];
      const onFinish: UseDurableChatOptions['onFinish'] = ({ isAbort, isError }) =>
        finishes.push({ isAbort, isError });
      const clientData = { delayMs: 20, repeat: 8 };
      const options = (overrides: Partial<UseDurableChatOptions> = {}) =>
        durableOptions(chatId, {
          persistence: memoryPersistence(records),
          clientData,
          onFinish,
          ...overrides,
        });
      if (hold) server.faults.holdAppendResponses(1);
      const first = mountChat(options());
      const message = userMessage('sent then left');
      void first.run((current) => current.sendMessage(message));
      if (hold) await waitForDom(() => expect(first.current.session.state.turnLive).toBe(true));
      first.unmount();
      await pause(800); // the agent answers meanwhile

      const second = mountChat(options({ messages: [message] }));
      await waitForDom(
        () => expect(second.transcript()).toEqual(['user: sent then left', reply('sent then left', 8)]),
        {
          timeout: 5_000,
        },
      );
      await waitForDom(() => expect(finishes).toEqual([{ isAbort: false, isError: false }]));
      second.unmount();
      server.faults.reset();
    },
  );

  it('useChat + useChatSession, while the session starts: the reply resumes when the chat is shown again', async () => {
    const chatId = nextChatId('plain-leave-sending');
    const records = new Map<string, PersistedChatRecord>();
    const errors: unknown[] = [];
    const session = () => sessionOptions(server, chatId, records, { clientData: { delayMs: 20, repeat: 8 } });
    const leftFinishes: { isAbort: boolean }[] = [];
    const first = mountPlainChat({
      session: session(),
      chat: {
        onError: (error) => errors.push(error),
        onFinish: ({ isAbort }) => leftFinishes.push({ isAbort }),
      },
    });
    const message = userMessage('plain sent then left');
    void first.chat.sendMessage(message);
    first.unmount();
    await pause(800);

    const second = mountPlainChat({ session: session(), chat: { resume: true, messages: [message] } });
    await waitForDom(
      () =>
        expect(second.transcript()).toEqual(['user: plain sent then left', reply('plain sent then left', 8)]),
      { timeout: 5_000 },
    );
    expect(errors).toEqual([]);
    // The chat that was left never hears the reply as if it had ended there (@ai-sdk/react 3
    // keeps an unmounted Chat reading; @ai-sdk/react 4 reports its own abort at most).
    expect(leftFinishes.filter((finish) => !finish.isAbort)).toEqual([]);
    second.unmount();
  });
});
