// @vitest-environment happy-dom
import { waitFor as waitForDom } from '@testing-library/react';
import {
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
} from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevServer } from '../../src/dev-server/index.js';
import { isDurableChatError } from '../../src/errors/durable-chat-error.js';
import { startSessionVia } from '../transport/support/dev-server-fixture.js';
import { chatOptions, mountChat, nextChatId, recordingFetch, startEchoServer } from './support/harness.js';

let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer();
});
afterAll(async () => {
  await server.close();
});

function appends(requests: { method: string; path: string; body: string | undefined }[]) {
  return requests
    .filter((request) => request.method === 'POST' && request.path.endsWith('/in/append'))
    .map((request) => JSON.parse(request.body ?? 'null') as { kind: string; payload?: { trigger?: string } });
}

/** True when `sequence` visits the states in `order` (each may be skipped, none may go back). */
function followsOrder(sequence: string[], order: string[]): boolean {
  let position = 0;
  for (const state of sequence) {
    const index = order.indexOf(state, position);
    if (index === -1) return false;
    position = index;
  }
  return true;
}

describe('useDurableChat: sending', () => {
  it('streams the echo reply; the combined status goes sending → (waking) → streaming → ready', async () => {
    const chat = mountChat(
      chatOptions(server, nextChatId('send'), undefined, { clientData: { delayMs: 5, repeat: 4 } }),
    );
    await chat.run((current) => current.sendMessage({ text: 'hello there' }));
    await waitForDom(() => expect(chat.current.status).toBe('ready'));
    expect(chat.transcript()).toEqual([
      'user: hello there',
      `assistant: Echo: ${Array(4).fill('hello there').join(' ')}`,
    ]);
    expect(chat.current.sessionStatus).toEqual({ type: 'ready' });
    expect(chat.statuses).toContain('sending');
    expect(chat.statuses).toContain('streaming');
    expect(
      followsOrder(chat.statuses, ['ready', 'sending', 'waking', 'streaming', 'ready']),
      chat.statuses.join(),
    ).toBe(true);
    expect(chat.current.session.state).toMatchObject({
      sessionId: expect.stringMatching(/^session_/),
      turnLive: false,
    });
    chat.unmount();
  });

  it('stop() aborts locally and appends one stop; the next turn is clean', async () => {
    const recorder = recordingFetch();
    const options = chatOptions(server, nextChatId('stop'), undefined, { fetch: recorder.fetch });
    const chat = mountChat({ ...options, clientData: { delayMs: 30, repeat: 30 } });
    void chat.run((current) => current.sendMessage({ text: 'a long answer to stop' }));
    await waitForDom(() => expect((chat.transcript()[1] ?? '').length).toBeGreaterThan(30));
    await chat.run((current) => current.stop());
    await waitForDom(() => expect(chat.current.status).toBe('ready'));
    const full = `assistant: Echo: ${Array(30).fill('a long answer to stop').join(' ')}`;
    expect((chat.transcript()[1] ?? '').length).toBeLessThan(full.length);
    expect(appends(recorder.requests).filter((body) => body.kind === 'stop')).toHaveLength(1);
    chat.update({ ...options, clientData: {} });
    await chat.run((current) => current.sendMessage({ text: 'next' }));
    await waitForDom(() => expect(chat.transcript().at(-1)).toBe('assistant: Echo: next'));
    expect(chat.current.error).toBeUndefined();
    chat.unmount();
  });

  it('stop() pressed while the message is still being sent stops the turn once it is stored', async () => {
    const recorder = recordingFetch();
    const start = startSessionVia(server);
    const slowStart: typeof start = async (input) => {
      await new Promise((resolve) => setTimeout(resolve, 150));
      return start(input);
    };
    const chat = mountChat(
      chatOptions(server, nextChatId('early-stop'), undefined, {
        fetch: recorder.fetch,
        startSession: slowStart,
        clientData: { delayMs: 30, repeat: 30 },
      }),
    );
    void chat.run((current) => current.sendMessage({ text: 'stop me early' }));
    await waitForDom(() => expect(chat.current.sessionStatus.type).toBe('sending'));
    await chat.run((current) => current.stop());
    await waitForDom(() =>
      expect(appends(recorder.requests).map((body) => body.kind)).toEqual(['message', 'stop']),
    );
    await waitForDom(() => expect(chat.current.status).toBe('ready'));
    expect((chat.transcript()[1] ?? '').length).toBeLessThan(200);
    chat.unmount();
  });

  it('stop() while idle sends nothing', async () => {
    const recorder = recordingFetch();
    const chat = mountChat(
      chatOptions(server, nextChatId('idle-stop'), undefined, { fetch: recorder.fetch }),
    );
    await chat.run((current) => current.sendMessage({ text: 'done quickly' }));
    await waitForDom(() => expect(chat.current.status).toBe('ready'));
    await chat.run((current) => current.stop());
    expect(appends(recorder.requests).map((body) => body.kind)).toEqual(['message']);
    chat.unmount();
  });

  it('regenerate() replaces the last reply', async () => {
    const chat = mountChat(chatOptions(server, nextChatId('regen')));
    await chat.run((current) => current.sendMessage({ text: 'one' }));
    await waitForDom(() => expect(chat.current.status).toBe('ready'));
    const firstId = chat.current.messages[1]?.id;
    await chat.run((current) => current.regenerate());
    await waitForDom(() => expect(chat.current.status).toBe('ready'));
    expect(chat.transcript()).toEqual(['user: one', 'assistant: Echo: one']);
    expect(chat.current.messages[1]?.id).not.toBe(firstId);
    chat.unmount();
  });

  it('a tool approval continues with sendAutomaticallyWhen', async () => {
    const chat = mountChat(
      chatOptions(server, nextChatId('approve'), undefined, {
        sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
      }),
    );
    await chat.run((current) => current.sendMessage({ text: '/approve ship it' }));
    await waitForDom(() => expect(chat.current.status).toBe('ready'));
    const part = chat.current.messages[1]?.parts.find((candidate) => candidate.type === 'tool-confirm') as
      | { state: string; approval?: { id: string } }
      | undefined;
    expect(part?.state).toBe('approval-requested');
    await chat.run(async (current) => {
      await current.addToolApprovalResponse({ id: part?.approval?.id ?? '', approved: true });
    });
    await waitForDom(() =>
      expect(chat.transcript()).toEqual([
        'user: /approve ship it',
        'assistant: [tool-confirm]Confirmed: ship it',
      ]),
    );
    await waitForDom(() => expect(chat.current.status).toBe('ready'));
    chat.unmount();
  });

  it('a user-supplied tool output continues the turn', async () => {
    const chat = mountChat(
      chatOptions(server, nextChatId('ask'), undefined, {
        sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
      }),
    );
    await chat.run((current) => current.sendMessage({ text: '/ask favourite colour?' }));
    await waitForDom(() => expect(chat.current.status).toBe('ready'));
    const part = chat.current.messages[1]?.parts.find((candidate) => candidate.type === 'tool-askUser') as
      | { toolCallId: string; state: string }
      | undefined;
    expect(part?.state).toBe('input-available');
    await chat.run(async (current) => {
      await current.addToolOutput({
        tool: 'askUser' as never,
        toolCallId: part?.toolCallId ?? '',
        output: 'blue' as never,
      });
    });
    await waitForDom(() => expect(chat.transcript()[1]).toBe('assistant: [tool-askUser]You answered: blue'));
    chat.unmount();
  });

  it('sendAction fires the action and shows its output', async () => {
    const chat = mountChat(chatOptions(server, nextChatId('action')));
    await chat.run((current) => current.sendMessage({ text: 'hi' }));
    await waitForDom(() => expect(chat.current.status).toBe('ready'));
    const result = await chat.run((current) => current.sendAction({ type: 'shout' }));
    expect(result.seq).toBe(1);
    await waitForDom(() =>
      expect(chat.transcript()).toEqual(['user: hi', 'assistant: Echo: hi', 'assistant: SHOUT']),
    );
    await waitForDom(() => expect(chat.current.status).toBe('ready'));
    chat.unmount();
  });

  it('a steering message is appended while the reply streams and answered in a follow-up turn', async () => {
    const recorder = recordingFetch();
    const chat = mountChat(
      chatOptions(server, nextChatId('steer'), undefined, {
        fetch: recorder.fetch,
        clientData: { delayMs: 15 },
      }),
    );
    void chat.run((current) => current.sendMessage({ text: 'steer me while I talk' }));
    await waitForDom(() => expect(chat.current.status).toBe('streaming'));
    const outsBefore = recorder.requests.filter((request) => request.path.endsWith('/out')).length;
    await chat.run((current) => current.sendPendingMessage('also this'));
    expect(recorder.requests.filter((request) => request.path.endsWith('/out')).length).toBe(outsBefore);
    await waitForDom(() =>
      expect(chat.transcript()).toEqual([
        'user: steer me while I talk',
        'assistant: Echo: steer me while I talk',
        'user: also this',
        'assistant: Echo: also this',
      ]),
    );
    await waitForDom(() => expect(chat.current.status).toBe('ready'));
    expect(chat.current.pendingMessages).toEqual([]);
    chat.unmount();
  });

  it("with pendingMessages: 'inject' the steering message joins the transcript when the reply ends, nothing more is read", async () => {
    const recorder = recordingFetch();
    const chat = mountChat(
      chatOptions(server, nextChatId('inject'), undefined, {
        fetch: recorder.fetch,
        clientData: { delayMs: 15, repeat: 10 },
        pendingMessages: 'inject',
      }),
    );
    void chat.run((current) => current.sendMessage({ text: 'inject into this turn' }));
    await waitForDom(() => expect(chat.current.status).toBe('streaming'));
    await chat.run((current) => current.sendPendingMessage('folded in'));
    await waitForDom(() => expect(chat.current.pendingMessages).toHaveLength(1));
    await waitForDom(
      () =>
        expect(chat.transcript()).toEqual([
          'user: inject into this turn',
          `assistant: Echo: ${Array(10).fill('inject into this turn').join(' ')}`,
          'user: folded in',
        ]),
      { timeout: 3_000 },
    );
    expect(chat.current.pendingMessages).toEqual([]);
    expect(recorder.requests.filter((request) => request.path.endsWith('/out'))).toHaveLength(1);
    chat.unmount();
  });

  it('callbacks are read through refs: the newest onFinish runs', async () => {
    const finished: string[] = [];
    const options = chatOptions(server, nextChatId('refs'));
    const chat = mountChat({ ...options, onFinish: () => finished.push('first') });
    chat.update({ ...options, onFinish: () => finished.push('second') });
    await chat.run((current) => current.sendMessage({ text: 'which one?' }));
    await waitForDom(() => expect(finished).toEqual(['second']));
    chat.unmount();
  });

  it('shows a dropped connection as "reconnecting in N s" and finishes the reply', async () => {
    const chat = mountChat(
      chatOptions(server, nextChatId('drop'), undefined, {
        clientData: { delayMs: 10, repeat: 3 },
        retry: { firstRetryDelayMs: 800, initialDelayMs: 800, stallTimeoutMs: 3_000 },
        // The jitter at its top: the first reconnect waits the full 800 ms.
        environment: { random: () => 1, warn: () => {} },
      }),
    );
    server.faults.dropOutAfter(4);
    await chat.run((current) => current.sendMessage({ text: 'through a drop' }));
    await waitForDom(() => expect(chat.current.status).toBe('ready'), { timeout: 5_000 });
    expect(chat.transcript()[1]).toBe(`assistant: Echo: ${Array(3).fill('through a drop').join(' ')}`);
    expect(chat.statuses).toContain('reconnecting');
    expect(chat.labels).toContain('Reconnecting in 1 s');
    chat.unmount();
  });
});

describe('useDurableChat: tokens and closed sessions', () => {
  it('a token that expires mid-conversation is refreshed and the next turn works', async () => {
    const events: string[] = [];
    const chat = mountChat(
      chatOptions(server, nextChatId('expiry'), undefined, {
        onEvent: (event) => {
          if (event.type === 'token-refreshed') events.push(event.source);
        },
      }),
    );
    await chat.run((current) => current.sendMessage({ text: 'first' }));
    await waitForDom(() => expect(chat.current.status).toBe('ready'));
    server.faults.expireTokens();
    await chat.run((current) => current.sendMessage({ text: 'second' }));
    await waitForDom(() => expect(chat.transcript().at(-1)).toBe('assistant: Echo: second'));
    expect(events).toContain('unauthorized');
    expect(chat.current.session.state.tokenExpiresAt).toBeGreaterThan(Date.now());
    chat.unmount();
  });

  it('close(reason) closes the session: status closed, later sends fail with SESSION_CLOSED', async () => {
    const chatId = nextChatId('close');
    const closeSession = async ({ chatId: id, reason }: { chatId: string; reason?: string }) => {
      const response = await fetch(`${server.url}/api/v1/sessions/${encodeURIComponent(id)}/close`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.secretKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ reason }),
      });
      if (!response.ok) throw new Error(`close failed: ${response.status}`);
    };
    const chat = mountChat(chatOptions(server, chatId, undefined, { closeSession }));
    await chat.run((current) => current.sendMessage({ text: 'before closing' }));
    await waitForDom(() => expect(chat.current.status).toBe('ready'));
    await chat.run((current) => current.close('done here'));
    expect(chat.current.sessionStatus).toEqual({ type: 'closed', reason: 'done here' });
    expect(chat.current.statusLabel).toBe('Closed: done here');
    expect(chat.current.session.state).toMatchObject({ closed: true, closedReason: 'done here' });
    await chat.run((current) => current.sendMessage({ text: 'after closing' }));
    await waitForDom(() => expect(chat.current.status).toBe('error'));
    expect(isDurableChatError(chat.current.error) && chat.current.error.code).toBe('SESSION_CLOSED');
    chat.unmount();
  });

  it('close() without a closeSession option is refused and nothing changes', async () => {
    const chat = mountChat(chatOptions(server, nextChatId('no-close')));
    await expect(chat.current.close('nope')).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    expect(chat.current.session.state.closed).toBe(false);
    chat.unmount();
  });

  it('a session closed elsewhere shows as closed after the 409', async () => {
    const chatId = nextChatId('closed-elsewhere');
    const chat = mountChat(chatOptions(server, chatId));
    await chat.run((current) => current.sendMessage({ text: 'open' }));
    await waitForDom(() => expect(chat.current.status).toBe('ready'));
    await fetch(`${server.url}/api/v1/sessions/${chatId}/close`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.secretKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'admin' }),
    });
    await chat.run((current) => current.sendMessage({ text: 'rejected' }));
    await waitForDom(() => expect(chat.current.sessionStatus.type).toBe('closed'));
    expect(isDurableChatError(chat.current.error) && chat.current.error.code).toBe('SESSION_CLOSED');
    chat.unmount();
  });
});
