// @vitest-environment happy-dom
import { Chat } from '@ai-sdk/react';
import { render, waitFor as waitForDom } from '@testing-library/react';
import { Component, type ReactNode } from 'react';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryPersistence, type PersistedChatRecord } from '../../src/client/persistence.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { isDurableChatError } from '../../src/errors/durable-chat-error.js';
import { type UseDurableChatOptions, useDurableChat } from '../../src/react/use-durable-chat.js';
import { chatOptions, mountChat, nextChatId, recordingFetch, startEchoServer } from './support/harness.js';

let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer();
});
afterAll(async () => {
  await server.close();
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const hasQueue = 'experimental_queuedMessages' in new Chat({});

function defaults(
  chatId: string,
  records?: Map<string, PersistedChatRecord>,
  overrides: Partial<UseDurableChatOptions> = {},
): UseDurableChatOptions {
  const { retry: _shortened, ...options } = chatOptions(server, chatId, records);
  return { ...options, ...overrides };
}

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

function Queued({ options }: { options: UseDurableChatOptions }) {
  useDurableChat(options);
  return null;
}

describe('useDurableChat options', () => {
  it('throttle (the @ai-sdk/react 4 name) sets the render throttle like experimental_throttle', async () => {
    const run = async (overrides: Partial<UseDurableChatOptions>) => {
      const chat = mountChat(
        defaults(nextChatId('throttle'), undefined, { ...overrides, clientData: { delayMs: 1, repeat: 30 } }),
      );
      const before = chat.renders;
      await chat.run((current) => current.sendMessage({ text: 'abcdefgh'.repeat(10) }));
      await waitForDom(() => expect(chat.current.status).toBe('ready'), { timeout: 10_000 });
      const renders = chat.renders - before;
      chat.unmount();
      return renders;
    };
    const unthrottled = await run({ throttle: 0 });
    const slow = await run({ throttle: 10_000, experimental_throttle: 0 });
    // ~305 chunks: one render each without a throttle; a few status changes with a 10 s one.
    expect(unthrottled).toBeGreaterThan(200);
    expect(slow).toBeLessThan(20);
  });

  it.runIf(hasQueue)(
    'experimental_queue (ai 7) queues a message sent while the reply streams and sends it next',
    async () => {
      const recorder = recordingFetch();
      const chat = mountChat(
        defaults(nextChatId('queue'), undefined, {
          experimental_queue: true,
          fetch: recorder.fetch,
          clientData: { delayMs: 15, repeat: 8 },
        }),
      );
      void chat.run((current) => current.sendMessage({ text: 'first' }));
      await waitForDom(() => expect(chat.current.status).toBe('streaming'));
      void chat.run((current) => current.sendMessage({ text: 'second' }));
      await waitForDom(() =>
        expect(
          (chat.current as unknown as { experimental_queuedMessages: unknown[] }).experimental_queuedMessages,
        ).toHaveLength(1),
      );
      await waitForDom(
        () =>
          expect(chat.transcript()).toEqual([
            'user: first',
            `assistant: Echo: ${Array(8).fill('first').join(' ')}`,
            'user: second',
            `assistant: Echo: ${Array(8).fill('second').join(' ')}`,
          ]),
        { timeout: 5_000 },
      );
      chat.unmount();
    },
  );

  it.runIf(!hasQueue)(
    'experimental_queue with ai 6 (no AI SDK queue) is refused with INVALID_INPUT, not dropped',
    async () => {
      const caught: unknown[] = [];
      const view = render(
        <Catch onError={(error) => caught.push(error)}>
          <Queued options={defaults(nextChatId('no-queue'), undefined, { experimental_queue: true })} />
        </Catch>,
      );
      await waitForDom(() => expect(caught).toHaveLength(1));
      const error = caught[0];
      expect(isDurableChatError(error) && error.code).toBe('INVALID_INPUT');
      expect((error as { field?: string }).field).toBe('experimental_queue');
      view.unmount();
    },
  );

  it('persistence adapters are told apart by their id: the same id keeps the session, another id switches', async () => {
    const chatId = nextChatId('adapters');
    const first = new Map<string, PersistedChatRecord>();
    const second = new Map<string, PersistedChatRecord>();
    const adapter = (id: string, records: Map<string, PersistedChatRecord>) => ({
      ...memoryPersistence(records),
      id,
    });
    const chat = mountChat(defaults(chatId, undefined, { persistence: adapter('first', first) }));
    await chat.run((current) => current.sendMessage({ text: 'kept in the first' }));
    await waitForDom(() => expect(chat.current.status).toBe('ready'));
    await waitForDom(() => expect(first.get(chatId)?.sessionId).toMatch(/^session_/));
    const firstTransport = chat.current.session.transport;
    // Another object with the same id (an inline adapter) keeps the session.
    chat.update(defaults(chatId, undefined, { persistence: adapter('first', first) }));
    expect(chat.current.session.transport).toBe(firstTransport);

    chat.update(defaults(chatId, undefined, { persistence: adapter('second', second) }));
    await waitForDom(() => expect(chat.current.session.transport).not.toBe(firstTransport));
    await chat.run((current) => current.sendMessage({ text: 'kept in the second' }));
    await waitForDom(() => expect(chat.transcript().at(-1)).toBe('assistant: Echo: kept in the second'));
    await waitForDom(() => expect(second.get(chatId)?.sessionId).toMatch(/^session_/));
    chat.unmount();
  });

  it('after stop() turnLive is false: a remount neither resumes nor shows "streaming"', async () => {
    const chatId = nextChatId('stop-clears');
    const records = new Map<string, PersistedChatRecord>();
    const chat = mountChat(defaults(chatId, records, { clientData: { delayMs: 25, repeat: 40 } }));
    void chat.run((current) => current.sendMessage({ text: 'stop this one' }));
    await waitForDom(() => expect((chat.transcript()[1] ?? '').length).toBeGreaterThan(30));
    await chat.run((current) => current.stop());
    expect(chat.current.session.state.turnLive).toBe(false);
    await chat.current.session.sessionTransport.getClient(chatId).flushPersistence();
    expect(records.get(chatId)).toMatchObject({ turnLive: false });
    const shown = structuredClone(chat.current.messages);
    chat.unmount();

    const recorder = recordingFetch();
    const second = mountChat(defaults(chatId, records, { messages: shown, fetch: recorder.fetch }));
    await waitForDom(() => expect(second.current.session.state.hydrated).toBe(true));
    await pause(300);
    expect(second.statuses).toEqual(['ready']);
    expect(recorder.requests.filter((request) => request.path.endsWith('/out'))).toEqual([]);
    second.unmount();
  });
});
