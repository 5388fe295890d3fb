import { type DevServer, startDevServer } from 'durable-chat/dev-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readPlaygroundEnv } from '../../playground/src/host/playground-env.js';
import { type RunningPlayground, startPlayground } from '../../playground/src/host/start-playground.js';

// The host alone, in-process, over real loopback HTTP: no browser needed.

async function postJson(url: string, body: unknown): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function startChat(playground: RunningPlayground, chatId: string): Promise<string> {
  const response = await postJson(`${playground.url}/api/chat-session`, { action: 'start', chatId });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { publicAccessToken: string };
  return body.publicAccessToken;
}

function openOut(playground: RunningPlayground, chatId: string, token: string): Promise<Response> {
  return fetch(`${playground.url}/realtime/v1/sessions/${chatId}/out`, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', 'timeout-seconds': '30' },
  });
}

describe('readPlaygroundEnv', () => {
  it('defaults to the local dev server on port 5173 (or the next free one), PORT as given', () => {
    expect(readPlaygroundEnv({})).toEqual({
      port: 5173,
      strictPort: false,
      host: '127.0.0.1',
      backend: { kind: 'local' },
    });
    expect(readPlaygroundEnv({ PORT: '0', DURABLE_CHAT_BASE_URL: '' })).toMatchObject({
      port: 0,
      strictPort: true,
    });
    expect(readPlaygroundEnv({ PORT: '5173' }).strictPort).toBe(true);
  });

  it('reads BOOT_DELAY_MS for the local dev server (a cold start to try head start against)', () => {
    expect(readPlaygroundEnv({ BOOT_DELAY_MS: '2000' }).backend).toEqual({
      kind: 'local',
      bootDelayMs: 2000,
    });
    expect(readPlaygroundEnv({ BOOT_DELAY_MS: '' }).backend).toEqual({ kind: 'local' });
    for (const raw of ['slow', '-1', '1.5', '60001']) {
      expect(() => readPlaygroundEnv({ BOOT_DELAY_MS: raw }), raw).toThrow(
        expect.objectContaining({ code: 'INVALID_INPUT', field: 'BOOT_DELAY_MS' }),
      );
    }
  });

  it('reads a real deployment from the three variables', () => {
    const settings = readPlaygroundEnv({
      DURABLE_CHAT_BASE_URL: 'https://api.example.com/',
      DURABLE_CHAT_SECRET_KEY: 'sk_test_value',
      DURABLE_CHAT_TASK: 'support-agent',
    });
    expect(settings.backend).toEqual({
      kind: 'remote',
      baseURL: 'https://api.example.com',
      secretKey: 'sk_test_value',
      taskIdentifier: 'support-agent',
    });
  });

  it('rejects bad settings with a typed error that never shows the secret key', () => {
    const secret = 'sk_live_do_not_print_me';
    const cases: Record<string, string | undefined>[] = [
      { PORT: 'eighty' },
      { PORT: '70000' },
      { DURABLE_CHAT_BASE_URL: 'https://api.example.com' },
      { DURABLE_CHAT_BASE_URL: 'https://api.example.com', DURABLE_CHAT_SECRET_KEY: secret },
      { DURABLE_CHAT_BASE_URL: 'not a url', DURABLE_CHAT_SECRET_KEY: secret, DURABLE_CHAT_TASK: 't' },
      {
        DURABLE_CHAT_BASE_URL: 'ftp://files.example.com',
        DURABLE_CHAT_SECRET_KEY: secret,
        DURABLE_CHAT_TASK: 't',
      },
    ];
    for (const env of cases) {
      let caught: unknown;
      try {
        readPlaygroundEnv(env);
      } catch (error) {
        caught = error;
      }
      expect(caught, JSON.stringify(env)).toMatchObject({ code: 'INVALID_INPUT' });
      expect(String((caught as Error).message)).not.toContain(secret);
    }
  });
});

describe('the playground host on the local dev server', () => {
  let playground: RunningPlayground;

  beforeAll(async () => {
    playground = await startPlayground({
      port: 0,
      strictPort: true,
      host: '127.0.0.1',
      backend: { kind: 'local' },
    });
  });
  afterAll(async () => {
    await playground.close();
  });

  it('tells the page where the sessions are: its own origin, with faults on', async () => {
    const response = await fetch(`${playground.url}/playground/config`);
    const config = (await response.json()) as Record<string, unknown>;
    expect(config).toEqual({
      mode: 'local',
      baseURL: playground.url,
      taskIdentifier: 'demo',
      faults: true,
      headStart: true,
      instance: expect.any(String),
    });
    // Stable for the life of the process: the page compares it to spot a restart.
    const again = (await (await fetch(`${playground.url}/playground/config`)).json()) as Record<
      string,
      unknown
    >;
    expect(again.instance).toBe(config.instance);
  });

  it('serves the chat route: a session token for a chat, refusals as JSON', async () => {
    const token = await startChat(playground, 'host-route');
    expect(token.split('.')).toHaveLength(3);
    const bad = await postJson(`${playground.url}/api/chat-session`, {
      action: 'start',
      chatId: 'session_x',
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('refuses unknown faults with 400', async () => {
    for (const body of [{ fault: 'melt-cpu' }, {}, 'drop-connection']) {
      const response = await postJson(`${playground.url}/playground/faults`, body);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ code: 'INVALID_INPUT' });
    }
  });

  it('drop connection cuts an open .out stream: the reader sees an error, not an end', async () => {
    const token = await startChat(playground, 'host-drop');
    const out = await openOut(playground, 'host-drop', token);
    expect(out.status).toBe(200);
    expect(out.headers.get('content-type')).toContain('text/event-stream');
    const reader = out.body?.getReader();
    if (reader === undefined) throw new Error('no body');
    const fault = await postJson(`${playground.url}/playground/faults`, { fault: 'drop-connection' });
    expect(await fault.json()).toEqual({ ok: true, detail: 'dropped 1 open .out connection' });
    const readAll = async () => {
      for (;;) {
        const { done } = await reader.read();
        if (done) return 'ended';
      }
    };
    await expect(readAll()).rejects.toThrow();
    // Nothing left to cut.
    const again = await postJson(`${playground.url}/playground/faults`, { fault: 'drop-connection' });
    expect(await again.json()).toEqual({ ok: true, detail: 'dropped 0 open .out connections' });
  });

  it('expire token makes every earlier token fail with 401, and the route mints a working one', async () => {
    const token = await startChat(playground, 'host-expire');
    expect((await openOut(playground, 'host-expire', token)).status).toBe(200);
    const fault = await postJson(`${playground.url}/playground/faults`, { fault: 'expire-token' });
    expect(fault.status).toBe(200);
    expect((await openOut(playground, 'host-expire', token)).status).toBe(401);
    const fresh = await postJson(`${playground.url}/api/chat-session`, {
      action: 'token',
      chatId: 'host-expire',
    });
    const { publicAccessToken } = (await fresh.json()) as { publicAccessToken: string };
    const out = await openOut(playground, 'host-expire', publicAccessToken);
    expect(out.status).toBe(200);
    await out.body?.cancel();
  });

  it('serves the built app, with the app shell for any other path', async () => {
    for (const path of ['/', '/some/deep/link']) {
      const response = await fetch(`${playground.url}${path}`);
      expect(response.status).toBe(200);
      expect(await response.text()).toContain('<div id="root"></div>');
    }
  });
});

describe('the playground host on a real deployment (environment variables)', () => {
  let service: DevServer;
  let playground: RunningPlayground;

  beforeAll(async () => {
    // Another server standing in for the deployment: reached only over HTTP.
    service = await startDevServer({ port: 0 });
    playground = await startPlayground({
      port: 0,
      strictPort: true,
      host: '127.0.0.1',
      backend: { kind: 'remote', baseURL: service.url, secretKey: service.secretKey, taskIdentifier: 'demo' },
    });
  });
  afterAll(async () => {
    await playground.close();
    await service.close();
  });

  it('points the page at the deployment, never shows the key, and turns faults off', async () => {
    const response = await fetch(`${playground.url}/playground/config`);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({
      mode: 'remote',
      baseURL: service.url,
      taskIdentifier: 'demo',
      faults: false,
      headStart: false,
      instance: expect.any(String),
    });
    expect(text).not.toContain(service.secretKey);
    const fault = await postJson(`${playground.url}/playground/faults`, { fault: 'crash-run' });
    expect(fault.status).toBe(404);
    // The dev server's session API is not served in remote mode.
    expect((await postJson(`${playground.url}/api/v1/sessions`, {})).status).toBe(404);
    // Nor the head-start route: its reply comes from a mock model, not the deployment's agent.
    expect((await postJson(`${playground.url}/api/chat/head-start`, {})).status).toBe(404);
  });

  it('starts sessions on the deployment through the chat route', async () => {
    const token = await startChat(playground, 'remote-chat');
    const out = await fetch(`${service.url}/realtime/v1/sessions/remote-chat/out`, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', 'timeout-seconds': '1' },
    });
    expect(out.status).toBe(200);
    await out.body?.cancel();
  });
});
