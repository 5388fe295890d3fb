import type { UIMessage } from 'ai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../src/client/events.js';
import { SessionClient } from '../../src/client/session-client.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { AuthError } from '../../src/errors/http-error.js';
import { submitChunk } from '../../src/protocol/input-chunks.js';
import { readTokenClaims } from '../../src/protocol/token-claims.js';
import { createRouteSessionCallbacks } from '../../src/route-client/create-route-session-callbacks.js';
import { createChatRouteHandler } from '../../src/server/chat-route-handler.js';
import { SessionChatTransport } from '../../src/transport/session-chat-transport.js';
import { type SessionFollower, watchSession } from '../../src/transport/session-follower.js';
import { hostFetchHandler, type Listening } from '../server/support/listen.js';
import {
  startEchoServer,
  TestChat,
  transcript,
  uniqueChatId,
  userMessage,
  waitFor,
} from './support/dev-server-fixture.js';

/** The echo agent's client data: a reply long and slow enough to join halfway. */
const SLOW_REPLY = { delayMs: 15, repeat: 12 };

interface Deployment {
  server: DevServer;
  route: Listening;
  /** The chat route's action calls, by action. */
  calls: Record<string, number>;
}

async function deploy(): Promise<Deployment> {
  const server = await startEchoServer();
  const calls: Record<string, number> = {};
  const route = await hostFetchHandler(
    createChatRouteHandler({
      baseURL: server.url,
      secretKey: server.secretKey,
      taskIdentifier: 'echo',
      authorize: (_request, _chatId, action) => {
        calls[action] = (calls[action] ?? 0) + 1;
        return true;
      },
      onError: () => {},
    }),
  );
  return { server, route, calls };
}

/** The owner's device: the AI SDK's Chat on the transport, through the app's route, default options. */
function ownerChat(deployment: Deployment, chatId: string) {
  const routes = createRouteSessionCallbacks({ endpoint: deployment.route.url });
  const transport = new SessionChatTransport({
    baseURL: deployment.server.url,
    taskIdentifier: 'echo',
    startSession: routes.startSession,
    getAccessToken: routes.getAccessToken,
    clientData: SLOW_REPLY,
  });
  return { chat: new TestChat({ id: chatId, transport }), transport };
}

/** A second device: its own route callbacks, its own (empty) memory, a read-only token. */
function follow(
  deployment: Deployment,
  chatId: string,
  extra: { messages?: UIMessage[]; onEvent?: (event: SessionEvent) => void } = {},
): SessionFollower {
  const routes = createRouteSessionCallbacks({ endpoint: deployment.route.url });
  return watchSession({
    baseURL: deployment.server.url,
    chatId,
    getAccessToken: routes.getWatchToken,
    ...extra,
  });
}

const assistantText = (messages: readonly UIMessage[]) =>
  transcript(messages.filter((m) => m.role === 'assistant'));
const followers: SessionFollower[] = [];
afterEach(() => {
  for (const follower of followers.splice(0)) follower.stop();
});

describe('following a chat from another device (watch)', () => {
  let deployment: Deployment;
  beforeAll(async () => {
    deployment = await deploy();
  });
  afterAll(async () => {
    await deployment.route.close();
    await deployment.server.close();
  });

  it('a follower with its own empty storage joins mid-reply and ends with the owner transcript', async () => {
    const chatId = uniqueChatId('follow-mid');
    const { chat, transport } = ownerChat(deployment, chatId);
    await chat.sendMessage({ text: 'first turn' });
    const second = chat.sendMessage({ text: 'second turn' });
    // Mid-reply: the owner already shows part of the second answer.
    await waitFor(
      () => chat.messages.length === 4 && transcript(chat.messages)[3] !== 'assistant: ',
      10_000,
      'a partial reply',
    );
    expect(chat.status).toBe('streaming');
    // What the app had stored when the second device opened the chat: every message sent so far.
    const stored = chat.messages.slice(0, 3);
    const follower = follow(deployment, chatId, { messages: structuredClone(stored) });
    followers.push(follower);
    await waitFor(() => follower.getState().turnLive, 10_000, 'the follower to see the live turn');
    await second;
    await waitFor(
      () => !follower.getState().turnLive && transcript(follower.getState().messages).length === 4,
      10_000,
      'the follower to reach the turn-complete',
    );
    expect(follower.getState().messages).toEqual(chat.messages);
    expect(transcript(follower.getState().messages)[3]).toMatch(/^assistant: Echo: second turn/);

    // The next turn, started on the owner's device, shows on the follower too (a standing subscription).
    await chat.sendMessage({ text: 'third turn' });
    await waitFor(() => assistantText(follower.getState().messages).length === 3, 10_000, 'the third reply');
    await waitFor(() => !follower.getState().turnLive, 10_000, 'the third turn-complete');
    expect(assistantText(follower.getState().messages)).toEqual(assistantText(chat.messages));
    expect(follower.getState().phase).toEqual({ type: 'following' });
    transport.close();
  });

  it('a viewer that opens the chat before it exists waits for it, then shows its first reply', async () => {
    const chatId = uniqueChatId('follow-early');
    const follower = follow(deployment, chatId);
    followers.push(follower);
    await waitFor(() => follower.getState().phase.type === 'retrying', 10_000, 'the follower to wait (404)');
    const { chat, transport } = ownerChat(deployment, chatId);
    await chat.sendMessage({ text: 'first words' });
    await waitFor(
      () => assistantText(follower.getState().messages).length === 1 && !follower.getState().turnLive,
      20_000,
      'the first reply on the viewer',
    );
    expect(follower.getState().messages).toEqual(chat.messages.filter((m) => m.role === 'assistant'));
    expect(follower.getState().phase).toEqual({ type: 'following' });
    transport.close();
  });

  it('a follower holding a read-only watch token cannot append: 403, typed', async () => {
    const chatId = uniqueChatId('follow-readonly');
    const { chat, transport } = ownerChat(deployment, chatId);
    await chat.sendMessage({ text: 'hello' });
    const routes = createRouteSessionCallbacks({ endpoint: deployment.route.url });
    const token = await routes.getWatchToken({ chatId });
    expect(readTokenClaims(token)?.scopes).toEqual([`read:sessions:${chatId}:out`]);

    // On the wire: the dev server refuses the append.
    const raw = await fetch(`${deployment.server.url}/realtime/v1/sessions/${chatId}/in/append`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(submitChunk({ chatId, message: userMessage('not allowed') })),
    });
    expect(raw.status).toBe(403);

    // In the client: a typed error, after one refresh that brings the same scope.
    const client = new SessionClient({
      baseURL: deployment.server.url,
      chatId,
      taskIdentifier: 'echo',
      startSession: async () => ({ publicAccessToken: await routes.getWatchToken({ chatId }) }),
      getAccessToken: routes.getWatchToken,
    });
    const failure = await client
      .append(submitChunk({ chatId, message: userMessage('still not') }))
      .catch((e) => e);
    expect(failure).toBeInstanceOf(AuthError);
    expect(failure).toMatchObject({ code: 'FORBIDDEN', status: 403 });
    client.close();

    // Reading works, and the refreshed tokens of turn-complete records (which can append) never reach it.
    const follower = follow(deployment, chatId);
    followers.push(follower);
    await waitFor(() => assistantText(follower.getState().messages).length === 1, 10_000, 'the reply');
    await waitFor(
      () => follower.client.getState().lastEventId !== undefined && !follower.getState().turnLive,
    );
    await chat.sendMessage({ text: 'again' });
    await waitFor(
      () => assistantText(follower.getState().messages).length === 2 && !follower.getState().turnLive,
    );
    expect(readTokenClaims(follower.client.getState().token ?? '')?.scopes).toEqual([
      `read:sessions:${chatId}:out`,
    ]);
    transport.close();
  });
});

describe('where a follower ends', () => {
  let deployment: Deployment;
  beforeAll(async () => {
    deployment = await deploy();
  });
  afterAll(async () => {
    await deployment.route.close();
    await deployment.server.close();
  });

  it("a token that cannot read this chat ends it (failed, FORBIDDEN): another chat's watch token", async () => {
    const chatId = uniqueChatId('follow-forbidden');
    const { chat, transport } = ownerChat(deployment, chatId);
    await chat.sendMessage({ text: 'private' });
    const routes = createRouteSessionCallbacks({ endpoint: deployment.route.url });
    const follower = watchSession({
      baseURL: deployment.server.url,
      chatId,
      getAccessToken: () => routes.getWatchToken({ chatId: 'some-other-chat' }),
    });
    followers.push(follower);
    await waitFor(() => follower.getState().phase.type === 'failed', 10_000, 'the follower to fail');
    expect(follower.getState().phase).toMatchObject({
      type: 'failed',
      error: { code: 'FORBIDDEN', status: 403 },
    });
    expect(follower.getState().messages).toEqual([]);
    transport.close();
  });
});

describe('a follower through drops and token expiry', () => {
  // Faults are armed on a server of this block's own.
  let deployment: Deployment;
  beforeAll(async () => {
    deployment = await deploy();
  });
  afterAll(async () => {
    await deployment.route.close();
    await deployment.server.close();
  });

  it('survives dropped connections and expired tokens mid-reply and ends with the owner transcript', async () => {
    const chatId = uniqueChatId('follow-faults');
    const { chat, transport } = ownerChat(deployment, chatId);
    await chat.sendMessage({ text: 'warm up' });
    const follower = follow(deployment, chatId);
    followers.push(follower);
    await waitFor(
      () => assistantText(follower.getState().messages).length === 1 && !follower.getState().turnLive,
    );
    const watchCalls = deployment.calls.watch ?? 0;

    const reply = chat.sendMessage({ text: 'through the storm' });
    await waitFor(() => chat.status === 'streaming', 10_000, 'the owner to stream');
    // The follower's next connections drop after two records; once it holds its token,
    // every token so far expires, so its reconnects are refused (401) until it refreshes.
    deployment.server.faults.dropOutAfter(2, { connections: 2 });
    follower.stop();
    const events: SessionEvent[] = [];
    const joined = follow(deployment, chatId, { onEvent: (event) => events.push(event) });
    followers.push(joined);
    await waitFor(() => joined.client.getState().token !== undefined, 10_000, 'the token');
    deployment.server.faults.expireTokens();
    await reply;
    await waitFor(
      () => assistantText(joined.getState().messages).length === 2 && !joined.getState().turnLive,
      20_000,
      'the follower to finish the reply',
    );
    deployment.server.faults.reset();
    expect(assistantText(joined.getState().messages)).toEqual(assistantText(chat.messages));
    expect(joined.getState().messages.at(-1)).toEqual(chat.messages.at(-1));
    expect(events.filter((event) => event.type === 'stream-reconnecting').length).toBeGreaterThan(1);
    // The follower asked the route for a new read-only token after the old one was refused.
    expect(deployment.calls.watch ?? 0).toBeGreaterThan(watchCalls);
    transport.close();
  });

  it('a follower that reloads mid-reply (a new one, nothing kept) rebuilds the live reply from its start', async () => {
    const chatId = uniqueChatId('follow-reload');
    const { chat, transport } = ownerChat(deployment, chatId);
    const reply = chat.sendMessage({ text: 'reload me' });
    const before = follow(deployment, chatId);
    await waitFor(() => before.getState().turnLive, 10_000, 'the live turn');
    before.stop();
    const after = follow(deployment, chatId);
    followers.push(after);
    await reply;
    await waitFor(() => assistantText(after.getState().messages).length === 1 && !after.getState().turnLive);
    expect(after.getState().messages.at(-1)).toEqual(chat.messages.at(-1));
    expect(before.getState().phase).toEqual({ type: 'stopped' });
    transport.close();
  });
});
