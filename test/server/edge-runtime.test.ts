import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { EdgeVM } from '@edge-runtime/vm';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoAgent, startDevServer } from '../../src/dev-server/index.js';
import { uniqueChatId } from '../transport/support/dev-server-fixture.js';

// The built server entry, resolved through the package's `exports` with the conditions
// Next.js gives its edge compiler (`edge-light`, in Next 13-15 also `worker`, then the web
// defaults, which include `browser`), bundled into one script and run in Vercel's Edge Runtime
// sandbox (@edge-runtime/vm): no Node globals, no `AbortSignal.any`. The dev server it
// calls runs in this Node process, over loopback HTTP.
const root = fileURLToPath(new URL('../..', import.meta.url));
const EDGE_CONDITIONS = ['edge-light', 'worker', 'browser'];

interface ServerEntry {
  createChatRouteHandler(options: unknown): (request: Request) => Promise<Response>;
  createSessionsApi(options: unknown): {
    create(
      input: unknown,
      options?: { signal?: AbortSignal },
    ): Promise<{ id: string; publicAccessToken: string }>;
  };
}

let server: Awaited<ReturnType<typeof startDevServer>>;
let edge: EdgeVM;
let bundledInputs: string[] = [];

beforeAll(async () => {
  if (!existsSync(`${root}dist/server.js`)) throw new Error('run `npm run build` before these tests');
  server = await startDevServer({ port: 0, agents: [echoAgent] });
  const result = await build({
    stdin: {
      contents: "import * as entry from 'durable-chat/server';\nglobalThis.durableChatServer = entry;",
      resolveDir: root,
    },
    bundle: true,
    write: false,
    platform: 'neutral',
    conditions: EDGE_CONDITIONS,
    format: 'iife',
    metafile: true,
    logLevel: 'silent',
    // Resolve through the package's `exports`, not this repository's tsconfig `paths`.
    tsconfigRaw: '{}',
  });
  bundledInputs = Object.keys(result.metafile.inputs);
  edge = new EdgeVM();
  edge.evaluate(result.outputFiles[0]?.text ?? '');
});

afterAll(async () => {
  await server?.close();
});

const entry = () => edge.context.durableChatServer as ServerEntry;
const nextChatId = () => uniqueChatId('edge');

describe('durable-chat/server in the Edge Runtime sandbox', () => {
  it('resolves to the real helpers under the edge conditions, and the sandbox lacks Node APIs', () => {
    expect(bundledInputs).toContain('dist/server.js');
    expect(bundledInputs).not.toContain('dist/server-browser.js');
    expect(edge.evaluate('typeof process')).toBe('undefined');
    expect(edge.evaluate('typeof AbortSignal.any')).toBe('undefined');
  });

  it('answers a route start with the request signal passed upstream', async () => {
    const handler = entry().createChatRouteHandler({
      baseURL: server.url,
      secretKey: server.secretKey,
      taskIdentifier: 'echo',
      authorize: () => true,
    });
    const chatId = nextChatId();
    // A Request of the sandbox, with its own signal, as the edge runtime hands to a route.
    const request = edge.evaluate(
      `new Request('http://app.test/api/chat-session', { method: 'POST', headers: { 'content-type': 'application/json' }, body: ${JSON.stringify(JSON.stringify({ action: 'start', chatId }))}, signal: new AbortController().signal })`,
    ) as Request;
    const response = await handler(request);
    const body = (await response.json()) as {
      publicAccessToken?: string;
      sessionId?: string;
      error?: string;
    };
    expect(body.error).toBeUndefined();
    expect(response.status).toBe(200);
    expect(body.sessionId).toMatch(/^session_/);
    expect(typeof body.publicAccessToken).toBe('string');
  });

  it('creates a session with a caller signal, and aborting the signal rejects with ABORTED', async () => {
    const api = entry().createSessionsApi({ baseURL: server.url, secretKey: server.secretKey });
    const chatId = nextChatId();
    const input = {
      taskIdentifier: 'echo',
      externalId: chatId,
      triggerConfig: { basePayload: { chatId, trigger: 'preload' } },
    };
    const controller = edge.evaluate('new AbortController()') as AbortController;
    const session = await api.create(input, { signal: controller.signal });
    expect(session.id).toMatch(/^session_/);

    const aborting = edge.evaluate('new AbortController()') as AbortController;
    aborting.abort();
    await expect(api.create(input, { signal: aborting.signal })).rejects.toMatchObject({ code: 'ABORTED' });
  });
});
