import { AbstractChat, type ChatInit, type ChatState, type ChatStatus, type UIMessage } from 'ai';
import type { SessionEvent } from '../../../src/client/events.js';
import type { StartSessionInput, StartSessionResult } from '../../../src/client/session-client.js';
import {
  type DevServer,
  echoAgent,
  type StartDevServerOptions,
  startDevServer,
} from '../../../src/dev-server/index.js';
import { httpErrorFromResponse } from '../../../src/errors/http-error.js';
import { SessionChatTransport } from '../../../src/transport/session-chat-transport.js';
import type { SessionChatTransportOptions } from '../../../src/transport/transport-options.js';

export const quietLogger = { warn: () => {} };

let chatCounter = 0;
/** A chat id no other test (or earlier run against the same server) has used. */
export function uniqueChatId(name: string): string {
  return `${name}-${++chatCounter}-${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * Options every `startEchoServer` of this test file starts with. A conformance file sets
 * them before importing the flows, to run the same tests against another kind of server.
 */
export const serverDefaults: StartDevServerOptions = {};

/** A dev server on port 0 with the echo agent; quiet unless a test asks for its warnings. */
export async function startEchoServer(options: StartDevServerOptions = {}): Promise<DevServer> {
  return startDevServer({
    port: 0,
    agents: [echoAgent],
    logger: quietLogger,
    trimDelayMs: 60_000,
    ...serverDefaults,
    ...options,
  });
}

/**
 * What an app's server route does: create (or return) the session with the secret key.
 * It reports the row's `currentRunId` (the liveness source) unless `liveness: false`, and
 * the create's `isCached` (as `createChatRouteHandler` does) unless `reportIsCached: false`.
 */
export function startSessionVia(
  server: DevServer,
  counter?: { calls: number },
  options: { liveness?: boolean; reportIsCached?: boolean } = {},
) {
  return async ({ chatId, taskIdentifier, clientData }: StartSessionInput): Promise<StartSessionResult> => {
    if (counter) counter.calls++;
    const response = await fetch(`${server.url}/api/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.secretKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        type: 'chat.agent',
        taskIdentifier,
        externalId: chatId,
        triggerConfig: { basePayload: { chatId, trigger: 'preload', metadata: clientData } },
      }),
    });
    const body = (await response.json()) as {
      publicAccessToken: string;
      id: string;
      currentRunId?: string | null;
      isCached: boolean;
    };
    if (!response.ok)
      throw httpErrorFromResponse({ status: response.status, operation: 'create session', body });
    const result: StartSessionResult = { publicAccessToken: body.publicAccessToken, sessionId: body.id };
    if (options.liveness !== false) result.currentRunId = body.currentRunId ?? null;
    if (options.reportIsCached !== false) result.isCached = body.isCached;
    return result;
  };
}

export function createTransport(
  server: DevServer,
  overrides: Partial<SessionChatTransportOptions> = {},
): { transport: SessionChatTransport; events: SessionEvent[] } {
  const events: SessionEvent[] = [];
  const transport = new SessionChatTransport({
    baseURL: server.url,
    taskIdentifier: 'echo',
    startSession: startSessionVia(server),
    onEvent: (event) => events.push(event),
    retry: { initialDelayMs: 20, maxDelayMs: 200, stallTimeoutMs: 3_000 },
    environment: { warn: () => {} },
    ...overrides,
  });
  return { transport, events };
}

class ArrayChatState<M extends UIMessage> implements ChatState<M> {
  status: ChatStatus = 'ready';
  error: Error | undefined = undefined;
  messages: M[];
  constructor(messages: M[] = []) {
    this.messages = messages;
  }
  pushMessage = (message: M) => {
    this.messages = this.messages.concat(message);
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index: number, message: M) => {
    this.messages = [...this.messages.slice(0, index), message, ...this.messages.slice(index + 1)];
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/** The AI SDK's own `Chat` logic outside React (both majors export `AbstractChat`). */
export class TestChat<M extends UIMessage = UIMessage> extends AbstractChat<M> {
  constructor(init: ChatInit<M>) {
    super({ ...init, state: new ArrayChatState<M>(init.messages ?? []) });
  }
}

/** Text of every message, role-prefixed: a compact form to compare runs. */
export function transcript(messages: readonly UIMessage[]): string[] {
  return messages.map(
    (message) =>
      `${message.role}: ${message.parts.map((part) => (part.type === 'text' ? part.text : part.type === 'step-start' ? '' : `[${part.type}]`)).join('')}`,
  );
}

export async function readAll<T>(stream: ReadableStream<T>): Promise<T[]> {
  const items: T[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return items;
    items.push(value);
  }
}

export function userMessage(text: string, id = `u-${Math.random().toString(36).slice(2)}`): UIMessage {
  return { id, role: 'user', parts: [{ type: 'text', text }] };
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Headers;
  body: string | undefined;
}

/** The real fetch, with every request noted (the network is still real). */
export function recordingFetch(): { fetch: typeof fetch; requests: RecordedRequest[]; open: () => number } {
  const requests: RecordedRequest[] = [];
  let open = 0;
  const wrapped: typeof fetch = async (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    requests.push({
      method: init?.method ?? 'GET',
      path: url.pathname,
      headers: new Headers(init?.headers),
      body: typeof init?.body === 'string' ? init.body : undefined,
    });
    open++;
    try {
      const response = await fetch(input, init);
      if (response.body === null) {
        open--;
        return response;
      }
      // Count the response as open until its body ends, fails or is cancelled.
      const reader = response.body.getReader();
      let finished = false;
      const finish = () => {
        if (!finished) {
          finished = true;
          open--;
        }
      };
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          try {
            const { done, value } = await reader.read();
            if (done) {
              finish();
              controller.close();
            } else controller.enqueue(value);
          } catch (error) {
            finish();
            controller.error(error);
          }
        },
        cancel(reason) {
          finish();
          return reader.cancel(reason);
        },
      });
      return new Response(body, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    } catch (error) {
      open--;
      throw error;
    }
  };
  return { fetch: wrapped, requests, open: () => open };
}

/**
 * Polls `check` every 5 ms until it holds (or fails after `timeoutMs`). `what` may be a function,
 * so the failure names the state it ended in.
 */
export async function waitFor(
  check: () => boolean,
  timeoutMs = 5_000,
  what: string | (() => string) = 'condition',
): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) {
      throw new Error(`timed out waiting for ${typeof what === 'function' ? what() : what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
