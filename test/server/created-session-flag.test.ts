import { describe, expect, it } from 'vitest';
import { createRouteSessionCallbacks } from '../../src/route-client/create-route-session-callbacks.js';
import { uniqueChatId } from '../transport/support/dev-server-fixture.js';
import { echoRouteForFile, postRoute as post } from './support/echo-route.js';
import { failure } from './support/failure.js';
import { closeAfterEach, hostFetchHandler } from './support/listen.js';

// `isCached` from the session service through the route to the browser: `false` tells the
// transport that this start created the session, so `.out` is empty and the first send need
// not read it before appending.

const route = echoRouteForFile();
const closeLater = closeAfterEach();
const nextChatId = () => uniqueChatId('created');

async function postRoute(body: unknown): Promise<Record<string, unknown>> {
  const { status, json } = await post(route.url, body);
  expect(status).toBe(200);
  return json;
}

describe('createChatRouteHandler passes isCached through on start', () => {
  it('answers false when the start created the session, true on every later start', async () => {
    const chatId = nextChatId();
    expect(await postRoute({ action: 'start', chatId })).toMatchObject({ isCached: false });
    expect(await postRoute({ action: 'start', chatId })).toMatchObject({ isCached: true });
    // A token refresh is a repeated create too, but the browser only needs the token from it.
    expect(await postRoute({ action: 'token', chatId })).not.toHaveProperty('isCached');
  });
});

describe('createRouteSessionCallbacks().startSession returns isCached', () => {
  it('returns false for the call that created the session, true afterwards', async () => {
    const chatId = nextChatId();
    const callbacks = createRouteSessionCallbacks({ endpoint: route.url });
    const first = await callbacks.startSession({ chatId, taskIdentifier: 'echo' });
    expect(first.isCached).toBe(false);
    const again = await callbacks.startSession({ chatId, taskIdentifier: 'echo' });
    expect(again).toEqual({
      publicAccessToken: expect.any(String),
      sessionId: first.sessionId,
      currentRunId: expect.stringMatching(/^run_/),
      isCached: true,
    });
  });

  async function routeAnswering(body: Record<string, unknown>): Promise<string> {
    const app = closeLater(
      await hostFetchHandler(async () =>
        Response.json({ publicAccessToken: 'tok', sessionId: 'session_x', ...body }),
      ),
    );
    return app.url;
  }

  it('leaves isCached undefined when the route did not send it (an older route handler)', async () => {
    const callbacks = createRouteSessionCallbacks({ endpoint: await routeAnswering({}) });
    const started = await callbacks.startSession({ chatId: nextChatId() });
    expect(started).toEqual({ publicAccessToken: 'tok', sessionId: 'session_x' });
    expect('isCached' in started).toBe(false);
  });

  it('refuses a non-boolean isCached with ProtocolError UNEXPECTED_RESPONSE', async () => {
    for (const isCached of ['false', 0, null]) {
      const callbacks = createRouteSessionCallbacks({ endpoint: await routeAnswering({ isCached }) });
      expect(await failure(callbacks.startSession({ chatId: nextChatId() }))).toMatchObject({
        name: 'ProtocolError',
        code: 'UNEXPECTED_RESPONSE',
      });
    }
  });
});
