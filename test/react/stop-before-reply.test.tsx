// @vitest-environment happy-dom
// Stop pressed before the reply's first content (seen in Chromium on both React paths): the agent
// had written `start` and `start-step`, the AI SDK added an assistant message on `start`, and the
// stop left it there, an empty bubble. What the page shows after the stop must be what the chat
// shows when opened again: by this browser (its record says the turn was stopped; the app gives
// back what the page showed) and by one without the record, which reads the stopped turn from
// `.out` after the saved transcript's history cursor. Neither shows an assistant message.
import { waitFor as waitForDom } from '@testing-library/react';
import type { UIMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../src/client/events.js';
import { type HistoryCursor, historyCursor } from '../../src/client/history-cursor.js';
import type { PersistedChatRecord } from '../../src/client/persistence.js';
import type { DevServer } from '../../src/dev-server/index.js';
import type { SessionStateSource } from '../../src/session/session-registry.js';
import { MATRIX_TEXT, pauseTurn, startMomentsServer } from '../transport/support/moments.js';
import { chatOptions, mountChat, nextChatId } from './support/harness.js';
import { mountPlainChat, sessionOptions } from './support/plain-harness.js';

let server: DevServer;
beforeAll(async () => {
  server = await startMomentsServer();
});
afterAll(async () => {
  await server.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const FIRST = 'hello';
const TEXT = MATRIX_TEXT;
/** The echo agent writes `start`, `start-step`, then the text: the pause is before the text. */
const BEFORE_TEXT = 2;

interface Page {
  transcript(): string[];
  messages(): UIMessage[];
  status(): string;
  cursor(): HistoryCursor;
  send(text: string): void;
  /** The user's Stop button. */
  stop(): void;
  unmount(): void;
}

interface OpenInput {
  chatId: string;
  records: Map<string, PersistedChatRecord>;
  messages: UIMessage[];
  events?: SessionEvent[];
  cursor?: HistoryCursor;
}

type Open = (input: OpenInput) => Page;

const cursorOf = (source: SessionStateSource) => historyCursor(source.getState());

// The library's defaults (no shortened retry), tabs off, this page's records in `records`.
const openDurable: Open = ({ chatId, records, messages, events = [], cursor }) => {
  const { retry: _shortened, ...options } = chatOptions(server, chatId, records);
  const chat = mountChat({
    ...options,
    messages,
    historyCursor: cursor,
    onEvent: (event) => events.push(event),
  });
  return {
    transcript: () => chat.transcript(),
    messages: () => chat.current.messages,
    status: () => chat.current.status,
    cursor: () => cursorOf(chat.current.session.source),
    send: (text) => void chat.run((current) => current.sendMessage({ text })).catch(() => {}),
    stop: () => void chat.run((current) => current.stop()),
    unmount: () => chat.unmount(),
  };
};

const openPlain: Open = ({ chatId, records, messages, events = [], cursor }) => {
  const page = mountPlainChat({
    session: sessionOptions(server, chatId, records, {
      historyCursor: cursor,
      onEvent: (event) => events.push(event),
    }),
    chat: { resume: true, messages },
  });
  return {
    transcript: () => page.transcript(),
    messages: () => page.chat.messages as UIMessage[],
    status: () => page.chat.status,
    cursor: () => cursorOf(page.session.source),
    send: (text) => void page.chat.sendMessage({ text }).catch(() => {}),
    stop: () => void page.chat.stop(),
    unmount: () => page.unmount(),
  };
};

describe.each([
  ['useDurableChat', openDurable],
  ['useChat + useChatSession + useFollowTurns', openPlain],
] as const)('%s: Stop before the reply’s first content', (_path, open) => {
  it('shows no assistant message, live and when the chat is opened again (with and without this browser’s record)', async () => {
    const chatId = nextChatId('stop-before-reply');
    const records = new Map<string, PersistedChatRecord>();
    const events: SessionEvent[] = [];
    const page = open({ chatId, records, messages: [], events });
    page.send(FIRST);
    await waitForDom(
      () => expect(page.transcript()).toEqual([`user: ${FIRST}`, `assistant: Echo: ${FIRST}`]),
      {
        timeout: 5_000,
      },
    );
    await waitForDom(() => expect(page.status()).toBe('ready'));
    // What an app saves per status change (docs/react.md, History): the messages and the cursor.
    const saved = { messages: structuredClone(page.messages()), cursor: page.cursor() };

    const pause = pauseTurn(chatId, TEXT, BEFORE_TEXT);
    const chunksBefore = events.filter((event) => event.type === 'first-chunk').length;
    page.send(TEXT);
    await waitForDom(
      () =>
        expect(pause.reached && events.filter((event) => event.type === 'first-chunk').length).toBe(
          chunksBefore + 1,
        ),
      { timeout: 5_000 },
    );
    // `start` and `start-step` have reached the page (the AI SDK reads them in a few microtasks).
    await sleep(100);
    page.stop();
    await waitForDom(() => expect(page.status()).toBe('ready'));
    await waitForDom(() => expect(server.inspect(chatId)?.in.acknowledgedSeq).toBe(2));
    await sleep(200);
    const shown = [`user: ${FIRST}`, `assistant: Echo: ${FIRST}`, `user: ${TEXT}`];
    expect(page.transcript()).toEqual(shown);
    const live = structuredClone(page.messages());
    page.unmount();

    // This browser reloads: its record (the stopped turn) and what the page showed.
    const reloaded = open({ chatId, records, messages: live });
    await sleep(500);
    await waitForDom(() => expect(reloaded.status()).toBe('ready'));
    expect(reloaded.transcript()).toEqual(shown);
    reloaded.unmount();

    // Another browser: no record; the transcript saved before the stopped turn, with its cursor.
    // The stopped turn is read from `.out`: the server's record of it is `start`, `start-step`.
    const elsewhere = open({ chatId, records: new Map(), messages: saved.messages, cursor: saved.cursor });
    await sleep(500);
    await waitForDom(() => expect(elsewhere.status()).toBe('ready'));
    expect(elsewhere.transcript()).toEqual(shown.slice(0, 2));
    expect(elsewhere.messages()).toHaveLength(2);
    elsewhere.unmount();
  });
});
