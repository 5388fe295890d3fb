import type { UIMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDevServerApp, type DevServer, echoAgent, startDevServer } from '../../src/dev-server/index.js';
import { append, createSession, readOut, replyText, untilTurnCompletes } from './support/client.js';

describe('createDevServerApp (in-process fetch handler)', () => {
  it('serves the protocol without a socket', async () => {
    const dev = createDevServerApp({ agents: [echoAgent], logger: { warn() {} } });
    try {
      const headers = { authorization: `Bearer ${dev.secretKey}`, 'content-type': 'application/json' };
      const created = await dev.fetch(
        new Request('http://dev.local/api/v1/sessions', {
          method: 'POST',
          headers,
          body: JSON.stringify({
            type: 'chat.agent',
            taskIdentifier: 'echo',
            externalId: 'in-process',
            triggerConfig: {
              basePayload: {
                chatId: 'in-process',
                trigger: 'submit-message',
                message: { id: 'u', role: 'user', parts: [{ type: 'text', text: 'local' }] },
              },
            },
          }),
        }),
      );
      expect(created.status).toBe(201);
      const { publicAccessToken } = (await created.json()) as { publicAccessToken: string };
      const out = await dev.fetch(
        new Request('http://dev.local/realtime/v1/sessions/in-process/out', {
          headers: {
            authorization: `Bearer ${publicAccessToken}`,
            accept: 'text/event-stream',
            'timeout-seconds': '5',
          },
        }),
      );
      expect(out.headers.get('x-stream-version')).toBe('v2');
      const reader = out.body?.getReader();
      let text = '';
      const decoder = new TextDecoder();
      while (reader !== undefined && !text.includes('turn-complete')) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value);
      }
      await reader?.cancel();
      expect(text).toContain('Echo: l');
      expect(dev.inspect('in-process')?.run?.turns).toBe(1);
    } finally {
      dev.dispose();
    }
  });
});

describe('dispose', () => {
  it('ends open .out streams with [DONE]', async () => {
    const dev = createDevServerApp({ agents: [echoAgent], logger: { warn() {} } });
    const created = await dev.fetch(
      new Request('http://dev.local/api/v1/sessions', {
        method: 'POST',
        headers: { authorization: `Bearer ${dev.secretKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          type: 'chat.agent',
          taskIdentifier: 'echo',
          externalId: 'disposed',
          triggerConfig: { basePayload: { chatId: 'disposed', trigger: 'preload' } },
        }),
      }),
    );
    const { publicAccessToken } = (await created.json()) as { publicAccessToken: string };
    const out = await dev.fetch(
      new Request('http://dev.local/realtime/v1/sessions/disposed/out', {
        headers: {
          authorization: `Bearer ${publicAccessToken}`,
          accept: 'text/event-stream',
          'timeout-seconds': '600',
        },
      }),
    );
    const body = out.text();
    dev.dispose();
    expect(await body).toBe('data: [DONE]\n\n');
    expect(dev.context.streams.size).toBe(0);
  });
});

describe('admin endpoint and handover', () => {
  let server: DevServer;
  beforeAll(async () => {
    server = await startDevServer({ agents: [echoAgent], logger: { warn() {} } });
  });
  afterAll(() => server.close());

  const admin = (body: unknown, token = server.secretKey) =>
    fetch(`${server.url}/__dev/faults`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('arms faults over HTTP with the secret key only', async () => {
    const created = await createSession(server, { externalId: 'admin-chat' });
    const token = created.body.publicAccessToken;
    expect((await admin({ fault: 'failAppends', args: [1, 429] }, token)).status).toBe(401);
    expect((await admin({ fault: 'dispose' })).status).toBe(400);
    expect(await (await admin({ fault: 'failAppends', args: [1, 429] })).json()).toEqual({
      ok: true,
      fault: 'failAppends',
    });
    const limited = await append(server, 'admin-chat', token, { kind: 'stop' });
    expect(limited.status).toBe(429);
    const info = await fetch(`${server.url}/__dev/sessions/admin-chat`, {
      headers: { authorization: `Bearer ${server.secretKey}` },
    });
    expect(await info.json()).toMatchObject({
      row: { externalId: 'admin-chat' },
      run: { state: 'idle' },
      runCount: 1,
    });
    const cancel = () =>
      fetch(`${server.url}/__dev/sessions/admin-chat/cancel-run`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.secretKey}` },
      });
    expect(await (await cancel()).json()).toMatchObject({ ok: true, cancelled: true });
    expect(await (await cancel()).json()).toEqual({ ok: true, cancelled: false });
    expect(server.inspect('admin-chat')?.row.currentRunId).toBeNull();
  });

  it('seeds an empty history from headStartMessages on handover-prepare', async () => {
    const created = await createSession(server, { externalId: 'handover' });
    const token = created.body.publicAccessToken;
    const history: UIMessage[] = [
      { id: 'h1', role: 'user', parts: [{ type: 'text', text: 'earlier question' }] },
      { id: 'h2', role: 'assistant', parts: [{ type: 'text', text: 'earlier answer' }] },
      { id: 'h3', role: 'user', parts: [{ type: 'text', text: 'handed over' }] },
    ];
    await append(server, 'handover', token, {
      kind: 'message',
      payload: { chatId: 'handover', trigger: 'handover-prepare', headStartMessages: history },
    });
    const read = await readOut(server, 'handover', token, { until: untilTurnCompletes(1) });
    expect(replyText(read.records)).toBe('Echo: handed over');
  });
});
