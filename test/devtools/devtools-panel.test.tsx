// @vitest-environment jsdom
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useChat } from '@ai-sdk/react';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isInspected } from '../../src/client/inspection.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { DurableChatDevtools } from '../../src/devtools/durable-chat-devtools.js';
import type { SessionRecording } from '../../src/protocol/recording.js';
import { type UseChatSessionResult, useChatSession } from '../../src/react/use-chat-session.js';
import { type RunningCli, startCli, stopCli } from '../dev-server/support/cli.js';
import { nodeFetch } from '../react/support/harness.js';
import { startSessionVia } from '../transport/support/dev-server-fixture.js';

// The dev server runs as `durable-chat dev` in its own process: in a jsdom realm its JWT
// signing would meet jsdom's `Uint8Array` (another realm's) and fail.
let cli: RunningCli;
let server: DevServer;
beforeAll(async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'devtools-panel-'));
  cli = await startCli(['dev', '--port', '0', '--data-dir', dataDir]);
  server = { url: cli.url, secretKey: cli.secretKey } as DevServer;
});
afterAll(async () => {
  await stopCli(cli?.process);
});

type Chat = ReturnType<typeof useChat>;
const tokens = new Set<string>();
const mounted = new Map<string, { session: UseChatSessionResult; chat: Chat }>();

/** One chat as the README writes it: `useChatSession` + the AI SDK's `useChat`, default options. */
function ChatPane({ chatId }: { chatId: string }) {
  const session = useChatSession({
    chatId,
    baseURL: server.url,
    taskIdentifier: 'echo',
    startSession: async (input) => {
      const answer = await startSessionVia(server)(input);
      tokens.add(answer.publicAccessToken);
      return answer;
    },
    fetch: nodeFetch,
    environment: { warn: () => {} },
    tabs: false,
  });
  const chat = useChat({ id: session.id, transport: session.transport });
  mounted.set(chatId, { session, chat });
  return null;
}

function field(chatId: string, name: string): string {
  const details = screen.getByTestId('durable-chat-devtools-details');
  const chat = within(details).getByText(chatId, { selector: 'dd' });
  expect(chat).toBeTruthy();
  return within(details).getByText((_content, element) => element?.getAttribute('data-field') === name)
    .textContent as string;
}

describe('DurableChatDevtools', () => {
  it('lists two chats and updates a chat’s cursor live while its reply streams', async () => {
    const a = `panel-a-${Date.now()}`;
    const b = `panel-b-${Date.now()}`;
    const exported: SessionRecording[] = [];
    const view = render(
      <>
        <ChatPane chatId={a} />
        <ChatPane chatId={b} />
        <DurableChatDevtools initialIsOpen onExport={(recording) => exported.push(recording)} />
      </>,
    );
    await waitFor(() => expect(screen.getAllByTestId('durable-chat-devtools-chat')).toHaveLength(2));
    const ids = screen
      .getAllByTestId('durable-chat-devtools-chat')
      .map((item) => item.getAttribute('data-chat-id'));
    expect(ids.sort()).toEqual([a, b].sort());

    // Chat B selected; its reply streams slowly, so the panel is seen at several cursors.
    const itemB = screen
      .getAllByTestId('durable-chat-devtools-chat')
      .find((item) => item.dataset.chatId === b);
    fireEvent.click(itemB as HTMLElement);
    await waitFor(() => expect(field(b, 'cursor')).toBe('–'));
    const seen = new Set<string>();
    let done = false;
    const chatB = mounted.get(b)?.chat;
    if (chatB === undefined) throw new Error('chat B is not mounted');
    const sent = chatB
      .sendMessage(
        { text: 'watch the cursor move one record at a time' },
        { metadata: { delayMs: 50, repeat: 3 } },
      )
      .finally(() => {
        done = true;
      });
    // What the panel shows, sampled until the send (the whole turn) is over.
    while (!done) {
      seen.add(field(b, 'cursor'));
      await new Promise((resolve) => setTimeout(resolve, 15));
    }
    await sent;
    expect(mounted.get(b)?.chat.error).toBeUndefined();
    const numbers = [...seen].filter((value) => value !== '–').map(Number);
    // Several distinct cursors were on screen before the turn ended: it updated live.
    expect(new Set(numbers).size).toBeGreaterThanOrEqual(3);
    const final = String(mounted.get(b)?.session.state.lastEventId);
    await waitFor(() => expect(field(b, 'cursor')).toBe(final));
    expect(field(b, 'status')).toBe('Ready');
    expect(field(b, 'session')).toMatch(/./);

    // The timeline tells the turn: the append, its answer, the read, the turn-complete.
    const timeline = [...screen.getByTestId('durable-chat-devtools-timeline').querySelectorAll('li')]
      .map((li) => li.textContent)
      .join('\n');
    expect(timeline).toMatch(/append message \(submit-message\): \d+ B, part/);
    expect(timeline).toMatch(/message stored, \.in seq \d+/);
    expect(timeline).toMatch(/read \.out from/);
    expect(timeline).toMatch(/turn-complete at seq \d+/);

    // Chat A stays untouched.
    const itemA = screen
      .getAllByTestId('durable-chat-devtools-chat')
      .find((item) => item.dataset.chatId === a);
    fireEvent.click(itemA as HTMLElement);
    await waitFor(() => expect(field(a, 'cursor')).toBe('–'));

    // Export gives B's recording, redacted.
    fireEvent.click(itemB as HTMLElement);
    fireEvent.click(screen.getByTestId('durable-chat-devtools-export'));
    expect(exported).toHaveLength(1);
    expect(exported[0]?.chatId).toBe(b);
    expect(exported[0]?.exchanges.some((exchange) => exchange.kind === 'append')).toBe(true);
    expect(tokens.size).toBeGreaterThan(0);
    for (const token of tokens) expect(JSON.stringify(exported[0])).not.toContain(token);
    // Nor does the panel show one.
    for (const token of tokens) expect(document.body.textContent).not.toContain(token);

    view.unmount();
    mounted.clear();
  });

  it('attaches nothing until mounted, and nothing after it is unmounted', async () => {
    expect(isInspected()).toBe(false);
    const view = render(<DurableChatDevtools />);
    await waitFor(() => expect(isInspected()).toBe(true));
    expect(screen.getByTestId('durable-chat-devtools-toggle').textContent).toMatch(/durable-chat/);
    view.unmount();
    expect(isInspected()).toBe(false);
  });
});
