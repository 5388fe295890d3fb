import { TriggerChatTransport } from '@trigger.dev/sdk/chat';
import type { UIMessage, UIMessageChunk } from 'ai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type DevServer, echoAgent, startDevServer } from '../../src/dev-server/index.js';
import { createSession } from './support/client.js';

// The platform's own client (it reads `.out` only with `X-Stream-Version: v2`) must work
// against the dev server unchanged.
let server: DevServer;
beforeAll(async () => {
  server = await startDevServer({ agents: [echoAgent], logger: { warn() {} } });
});
afterEach(() => server.faults.reset());
afterAll(() => server.close());

function transport(): TriggerChatTransport {
  const token = async (chatId: string) =>
    (await createSession(server, { externalId: chatId })).body.publicAccessToken;
  return new TriggerChatTransport({
    task: 'echo',
    baseURL: server.url,
    accessToken: ({ chatId }) => token(chatId),
    startSession: async ({ chatId }) => ({ publicAccessToken: await token(chatId) }),
  });
}

async function send(
  client: TriggerChatTransport,
  chatId: string,
  messages: UIMessage[],
): Promise<UIMessageChunk[]> {
  const stream = await client.sendMessages({
    chatId,
    trigger: 'submit-message',
    messageId: undefined,
    messages,
    abortSignal: undefined,
  });
  const chunks: UIMessageChunk[] = [];
  const reader = stream.getReader();
  while (true) {
    const { done, value } = await reader.read();
    if (done) return chunks;
    chunks.push(value);
  }
}

const text = (chunks: UIMessageChunk[]) =>
  chunks.map((chunk) => (chunk.type === 'text-delta' ? chunk.delta : '')).join('');
const user = (id: string, value: string): UIMessage => ({
  id,
  role: 'user',
  parts: [{ type: 'text', text: value }],
});

describe('the platform client against the dev server', () => {
  it('streams two turns of one chat', async () => {
    const client = transport();
    const first = await send(client, 'platform-two', [user('u1', 'first turn')]);
    expect(first.map((chunk) => chunk.type)).toEqual([
      'start',
      'start-step',
      'text-start',
      'text-delta',
      'text-delta',
      'text-end',
      'finish-step',
      'finish',
    ]);
    expect(text(first)).toBe('Echo: first turn');
    const second = await send(client, 'platform-two', [user('u1', 'first turn'), user('u2', 'second')]);
    expect(text(second)).toBe('Echo: second');
  });

  it('heals a dropped .out connection: the same reply, nothing lost or repeated', async () => {
    const client = transport();
    server.faults.dropOutAfter(4);
    const chunks = await send(client, 'platform-drop', [user('u1', 'a reply long enough to be cut')]);
    expect(text(chunks)).toBe('Echo: a reply long enough to be cut');
    // The armed drop was taken by the client's connection (nothing left to take).
    expect(server.faults.takeOutPlan()).toEqual({});
  });
});
