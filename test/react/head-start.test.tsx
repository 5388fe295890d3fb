// @vitest-environment happy-dom

import { waitFor as waitForDom } from '@testing-library/react';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PersistedChatRecord } from '../../src/client/persistence.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { startEchoServer } from '../transport/support/dev-server-fixture.js';
import {
  type HeadStartApp,
  historyAgent,
  routeModel,
  startHeadStartApp,
  streamTextReply,
} from '../transport/support/head-start-app.js';
import { nextChatId, nodeFetch } from './support/harness.js';
import { mountPlainChat, sessionOptions } from './support/plain-harness.js';

const history = historyAgent();
let server: DevServer;
let app: HeadStartApp;
beforeAll(async () => {
  server = await startEchoServer({ agents: [history.agent] });
  app = await startHeadStartApp(server, streamTextReply(routeModel()));
});
afterAll(async () => {
  await app.close();
  await server.close();
});

describe('useChatSession with headStart', () => {
  it('answers a new chat’s first message from the route and the next through .in; the record keeps the session', async () => {
    const chatId = nextChatId('react-head-start');
    const records = new Map<string, PersistedChatRecord>();
    const page = mountPlainChat({
      session: sessionOptions(server, chatId, records, {
        headStart: { api: app.headStartUrl, fetch: nodeFetch },
      }),
    });
    const before = app.calls.headStart;
    await page.chat.sendMessage({ text: 'hello hooks' });
    await waitForDom(() => expect(page.chat.status).toBe('ready'));
    expect(page.transcript()).toEqual(['user: hello hooks', 'assistant: Route: hello hooks']);
    expect(app.calls.headStart - before).toBe(1);
    // The session the route made is the chat's now, kept in its record.
    await waitForDom(() => expect([...records.values()][0]?.sessionId).toMatch(/^session_/));
    await page.chat.sendMessage({ text: 'and now' });
    await waitForDom(() => expect(page.chat.status).toBe('ready'));
    expect(page.transcript()).toEqual([
      'user: hello hooks',
      'assistant: Route: hello hooks',
      'user: and now',
      'assistant: Echo: and now',
    ]);
    expect(app.calls.headStart - before).toBe(1);
    expect(history.seen.at(-1)).toEqual([
      'user: hello hooks',
      'assistant: Route: hello hooks',
      'user: and now',
    ]);
    expect(records.size).toBe(1);
    page.unmount();
  });
});
