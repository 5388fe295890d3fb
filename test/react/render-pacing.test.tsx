// @vitest-environment happy-dom
import { waitFor as waitForDom } from '@testing-library/react';
import type { UIMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClientEnvironment } from '../../src/client/environment.js';
import type { PersistedChatRecord } from '../../src/client/persistence.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { DEFAULT_RENDER_THROTTLE_MS } from '../../src/session/delta-pacer.js';
import { manualClock } from '../session/support/manual-clock.js';
import { chatOptions, mountChat, nextChatId, startEchoServer } from './support/harness.js';
import { mountPlainChat, sessionOptions } from './support/plain-harness.js';

let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer();
});
afterAll(async () => {
  await server.close();
});

const W = DEFAULT_RENDER_THROTTLE_MS;
const LINE = 'paced deltas, one window at a time';
const REPEAT = 12;
const fullReply = `assistant: Echo: ${Array(REPEAT).fill(LINE).join(' ')}`;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Either React path, mounted with its default options apart from the clock. */
interface Page {
  transcript(): string[];
  reply(): string;
  send(text: string): void;
  stop(): void;
  ready(): boolean;
  renders(): number;
  unmount(): void;
}

function mount(path: 'useDurableChat' | 'useChat', environment: Partial<ClientEnvironment>): Page {
  const clientData = { delayMs: 10, repeat: REPEAT };
  if (path === 'useDurableChat') {
    const chat = mountChat(chatOptions(server, nextChatId('paced'), undefined, { environment, clientData }));
    return {
      transcript: () => chat.transcript(),
      reply: () => chat.transcript()[1] ?? '',
      send: (text) => void chat.run((current) => current.sendMessage({ text })),
      stop: () => void chat.current.stop(),
      ready: () => chat.current.status === 'ready',
      renders: () => chat.renders,
      unmount: () => chat.unmount(),
    };
  }
  const page = mountPlainChat({
    session: sessionOptions(server, nextChatId('plain-paced'), undefined, { environment, clientData }),
  });
  return {
    transcript: () => page.transcript(),
    reply: () => page.transcript()[1] ?? '',
    send: (text) => void page.chat.sendMessage({ text }),
    stop: () => void page.chat.stop(),
    ready: () => page.chat.status === 'ready',
    renders: () => page.renders,
    unmount: () => page.unmount(),
  };
}

describe.each(['useDurableChat', 'useChat'] as const)('%s, default options: deltas are paced', (path) => {
  it('shows the first delta at once, holds the next ones until the window ends, then shows them merged', async () => {
    const clock = manualClock();
    const page = mount(path, clock.environment);
    page.send(LINE);
    await waitForDom(() => expect(page.reply().length).toBeGreaterThan('assistant: '.length));
    const first = page.reply();
    // Deltas keep arriving (one every 10 ms), but the session's clock has not moved: none is shown.
    await pause(120);
    expect(page.reply()).toBe(first);
    clock.advance(W - 1);
    await pause(20);
    expect(page.reply()).toBe(first);
    clock.advance(1);
    await waitForDom(() => expect(page.reply().length).toBeGreaterThan(first.length + 8));
    expect(fullReply.startsWith(page.reply())).toBe(true);
    // The end of the text part hands over whatever is held: the reply completes without the clock.
    await waitForDom(() => expect(page.ready()).toBe(true), { timeout: 10_000 });
    expect(page.transcript()).toEqual([`user: ${LINE}`, fullReply]);
    page.unmount();
  });

  it("the user's stop ends the reply at what was shown: a delta held then never shows later", async () => {
    const clock = manualClock();
    const page = mount(path, clock.environment);
    page.send(LINE);
    await waitForDom(() => expect(page.reply().length).toBeGreaterThan('assistant: '.length));
    await pause(120);
    page.stop();
    await waitForDom(() => expect(page.ready()).toBe(true), { timeout: 10_000 });
    // useChat applies nothing after its abort, so what was held is dropped, not shown late.
    const stopped = page.reply();
    expect(fullReply.startsWith(stopped)).toBe(true);
    expect(stopped.length).toBeLessThan(fullReply.length);
    clock.advance(W);
    await pause(100);
    expect(page.reply()).toBe(stopped);
    expect(page.ready()).toBe(true);
    page.unmount();
  });

  it('an unmount while a delta is held ends quietly: nothing renders after it, even when the window ends', async () => {
    const clock = manualClock();
    const page = mount(path, clock.environment);
    page.send(LINE);
    await waitForDom(() => expect(page.reply().length).toBeGreaterThan('assistant: '.length));
    await pause(60);
    page.unmount();
    const renders = page.renders();
    clock.advance(W);
    await pause(200);
    expect(page.renders()).toBe(renders);
  });
});

describe('useDurableChat: a chat switched away from while a delta is held', () => {
  it('hears nothing of it in the next chat, and shows its reply exactly once when shown again', async () => {
    const clock = manualClock();
    const records = new Map<string, PersistedChatRecord>();
    const a = nextChatId('held-a');
    const b = nextChatId('held-b');
    const options = (chatId: string, messages?: UIMessage[]) =>
      chatOptions(server, chatId, records, {
        environment: clock.environment,
        clientData: { delayMs: 10, repeat: REPEAT },
        ...(messages === undefined ? {} : { messages }),
      });
    const chat = mountChat(options(a));
    void chat.run((current) => current.sendMessage({ text: LINE }));
    await waitForDom(() => expect((chat.transcript()[1] ?? '').length).toBeGreaterThan('assistant: '.length));
    await pause(60);
    const user = structuredClone(chat.current.messages[0]) as UIMessage;
    await chat.current.session.sessionTransport.getClient(a).flushPersistence();

    chat.update(options(b));
    await waitForDom(() => expect(chat.current.session.id).toBe(b));
    // Chat A's window ends while chat B is shown: what A held goes nowhere.
    clock.advance(W);
    await pause(100);
    expect(chat.transcript()).toEqual([]);

    chat.update(options(a, [user]));
    await waitForDom(() => expect(chat.transcript()).toEqual([`user: ${LINE}`, fullReply]), {
      timeout: 10_000,
    });
    await waitForDom(() => expect(chat.current.status).toBe('ready'));
    expect(chat.transcript()).toEqual([`user: ${LINE}`, fullReply]);
    chat.unmount();
  });
});

describe('renders per 1,000 chunks with the default options', () => {
  it('useChat over useChatSession, no throttle passed to useChat: paced, and the same reply as unpaced', async () => {
    const run = async (throttle: number | undefined) => {
      const page = mountPlainChat({
        session: sessionOptions(server, nextChatId('plain-count'), undefined, {
          clientData: { delayMs: 1, repeat: 60 },
          ...(throttle === undefined ? {} : { throttle }),
        }),
      });
      const before = page.renders;
      const started = Date.now();
      await page.chat.sendMessage({ text: LINE });
      await waitForDom(() => expect(page.chat.status).toBe('ready'), { timeout: 10_000 });
      const reply = page.transcript()[1] ?? '';
      const result = { renders: page.renders - before, ms: Date.now() - started, reply };
      page.unmount();
      return result;
    };
    const paced = await run(undefined);
    const unpaced = await run(0);
    const chunks = Math.ceil((paced.reply.length - 'assistant: '.length) / 8);
    console.info(
      `[renders per 1,000 chunks] useChat + useChatSession, default: ${Math.round((paced.renders / chunks) * 1000)} (${paced.renders} renders, ${chunks} chunks, ${paced.ms} ms); throttle 0: ${Math.round((unpaced.renders / chunks) * 1000)}`,
    );
    expect(paced.reply).toBe(unpaced.reply);
    expect(chunks).toBeGreaterThan(250);
    // One render per window while text streams, plus the status changes and frame chunks around it.
    expect(paced.renders).toBeLessThanOrEqual(Math.ceil(paced.ms / W) + 15);
    expect(unpaced.renders).toBeGreaterThan(chunks);
  });
});
