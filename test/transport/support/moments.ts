import type { UIMessage, UIMessageChunk } from 'ai';
import type { ClientEnvironment } from '../../../src/client/environment.js';
import type { SessionPersistence } from '../../../src/client/persistence.js';
import { memoryPersistence } from '../../../src/client/persistence.js';
import { type AgentStream, type DevServer, defineAgent, echoAgent } from '../../../src/dev-server/index.js';
import { SessionChatTransport } from '../../../src/transport/session-chat-transport.js';
import {
  recordingFetch,
  startEchoServer,
  startSessionVia,
  TestChat,
  transcript,
  waitFor,
} from './dev-server-fixture.js';

/**
 * Support for the user-action × turn-moment matrix (`user-moments.test.ts`): an echo agent
 * the test can pause before any chunk of a chat's next turn, a "page" fetch that can hold
 * the append request or response, drop its `.out` connections and die (a reload), and a
 * `World` that runs one conversation through the AI SDK's own Chat under the library's
 * default options.
 */

// ---------------------------------------------------------------------------------------
// The agent: the echo agent, pausable before chunk k of a chat's next turn.

export interface AgentPause {
  /** Chunks of the turn written before the pause. */
  readonly beforeChunk: number;
  /** True once the agent reached the pause (the turn started, `beforeChunk` chunks out). */
  reached: boolean;
  release(): void;
}

const pauses = new Map<string, AgentPause & { released: Promise<void> }>();

const pauseKey = (chatId: string, text: string) => `${chatId}\u0000${text}`;

/**
 * The turn of `chatId` that answers the user message `text` stops before its chunk
 * `beforeChunk` until `release()` (or a stop). Keyed by the text, not "the next turn": a
 * stopped earlier turn the agent runs late must not take it.
 */
export function pauseTurn(chatId: string, text: string, beforeChunk: number): AgentPause {
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const pause = { beforeChunk, reached: false, release, released };
  pauses.set(pauseKey(chatId, text), pause);
  return pause;
}

async function* pausable(
  inner: AsyncIterable<UIMessageChunk>,
  pause: AgentPause & { released: Promise<void> },
  signal: AbortSignal,
): AsyncIterable<UIMessageChunk> {
  let index = 0;
  for await (const chunk of inner) {
    if (index === pause.beforeChunk) {
      pause.reached = true;
      await Promise.race([
        pause.released,
        new Promise<void>((resolve) => {
          if (signal.aborted) resolve();
          signal.addEventListener('abort', () => resolve(), { once: true });
        }),
      ]);
      if (signal.aborted) return;
    }
    index++;
    yield chunk;
  }
}

/** The echo agent (same id, same answers), with `pauseTurn`. */
export const pausableEchoAgent = defineAgent({
  ...echoAgent,
  run(context) {
    const inner = echoAgent.run(context) as AsyncIterable<UIMessageChunk>;
    const last = context.messages[context.messages.length - 1];
    const text =
      last?.role === 'user' ? last.parts.map((part) => (part.type === 'text' ? part.text : '')).join('') : '';
    const key = pauseKey(context.chatId, text);
    const pause = pauses.get(key);
    if (pause === undefined) return inner as AgentStream;
    pauses.delete(key);
    return pausable(inner, pause, context.signal) as AgentStream;
  },
});

/** What the tab matrices send, and what the echo agent answers it. */
export const MATRIX_TEXT = 'tell me a long story, in many small pieces please';
export const MATRIX_OTHER_TEXT = 'from the other tab';
export const echoReply = (text: string) => `assistant: Echo: ${text}`;
/** The agent writes start, start-step, text-start, then 8-character deltas: pause before the 4th. */
export const MID_REPLY_CHUNK = 6;

export function startMomentsServer(): Promise<DevServer> {
  // trimDelayMs stays the fixture's 60 s: "between turn-complete and trim" is a wide moment.
  return startEchoServer({ agents: [pausableEchoAgent] });
}

/** Servers leased one per running cell: faults (and `expireTokens`) are server-wide. */
export class ServerPool {
  private readonly free: DevServer[] = [];
  private readonly waiting: ((server: DevServer) => void)[] = [];
  readonly all: DevServer[] = [];

  static async start(size: number): Promise<ServerPool> {
    const pool = new ServerPool();
    for (let index = 0; index < size; index++) {
      const server = await startMomentsServer();
      pool.all.push(server);
      pool.free.push(server);
    }
    return pool;
  }

  async lease<T>(use: (server: DevServer) => Promise<T>): Promise<T> {
    const server = this.free.pop() ?? (await new Promise<DevServer>((resolve) => this.waiting.push(resolve)));
    try {
      return await use(server);
    } finally {
      server.faults.reset();
      server.faults.setTrimDelay(60_000);
      const next = this.waiting.shift();
      if (next !== undefined) next(server);
      else this.free.push(server);
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.all.map((server) => server.close()));
  }
}

// ---------------------------------------------------------------------------------------
// The page: one transport's network.

type Fetch = typeof fetch;

function urlOf(input: Parameters<Fetch>[0]): URL {
  return new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
}

const abortError = () => new DOMException('This operation was aborted', 'AbortError');

/**
 * A page's fetch: can hold its next append request (not sent yet) or response (stored,
 * not answered yet) or its next `.out` read (not sent yet), drop every open `.out` response (the network cut the SSE connection),
 * and die (a reload: held requests are never sent, open bodies end, later requests fail).
 */
export class Page {
  readonly fetch: Fetch;
  /** Held: the append whose body carries this text (a user message's), once. */
  private holdRequest: string | undefined;
  private holdResponse: string | undefined;
  /** Held: the next `.out` read (a resume's or a follower's GET), once. */
  private holdOut = false;
  private readonly held: (() => void)[] = [];
  private readonly openOut = new Set<(error: unknown) => void>();
  private readonly openBodies = new Set<() => void>();
  private dead = false;
  /** Append responses this page received (held ones count once released). */
  appendsAnswered = 0;
  /** Append requests this page sent to the server. */
  appendsSent = 0;

  constructor(inner: Fetch) {
    this.fetch = async (input, init) => {
      if (this.dead) throw new TypeError('fetch failed (the page was reloaded)');
      const url = urlOf(input);
      const isAppend = url.pathname.endsWith('/in/append');
      const isOut = url.pathname.endsWith('/out');
      const carries = (text: string | undefined) =>
        isAppend &&
        text !== undefined &&
        typeof init?.body === 'string' &&
        init.body.includes(JSON.stringify(text));
      if (carries(this.holdRequest)) {
        this.holdRequest = undefined;
        await this.wait(init?.signal ?? undefined);
      }
      if (isOut && this.holdOut && (init?.method ?? 'GET') === 'GET') {
        this.holdOut = false;
        await this.wait(init?.signal ?? undefined);
      }
      if (isAppend) this.appendsSent++;
      const response = await inner(input, init);
      // Only a stored append's answer is held (a 401 or 429 on the way is passed on).
      if (carries(this.holdResponse) && response.ok) {
        this.holdResponse = undefined;
        const text = await response.text();
        await this.wait(init?.signal ?? undefined);
        this.appendsAnswered++;
        return new Response(text, {
          status: response.status,
          statusText: response.statusText,
          headers: response.headers,
        });
      }
      if (isAppend) this.appendsAnswered++;
      if (response.body === null) return response;
      return this.track(response, isOut);
    };
  }

  /** The append of the message with `text` waits here, unsent, until `release()`. */
  holdAppendRequest(text: string): void {
    this.holdRequest = text;
  }

  /** The append of the message with `text` is sent and stored; its answer waits here until `release()`. */
  holdAppendResponse(text: string): void {
    this.holdResponse = text;
  }

  /**
   * The next `.out` read waits here, unsent, until `release()` (a slow or half-open connection:
   * the read has no answer yet, short of the connect timeout).
   */
  holdOutRequest(): void {
    this.holdOut = true;
  }

  /** Requests or responses currently held. */
  get holding(): number {
    return this.held.length;
  }

  release(): void {
    for (const resume of this.held.splice(0)) resume();
  }

  /** Errors every open `.out` response body, as a network that cut the connection. */
  dropOut(): number {
    const open = [...this.openOut];
    for (const drop of open) drop(new TypeError('network error: connection reset'));
    return open.length;
  }

  get openOutCount(): number {
    return this.openOut.size;
  }

  /** The page is gone: nothing held is sent, open bodies end, later requests fail. */
  kill(): void {
    this.dead = true;
    for (const resume of this.held.splice(0)) resume();
    for (const end of [...this.openBodies]) end();
  }

  private wait(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const resume = () => {
        if (this.dead) reject(new TypeError('fetch failed (the page was reloaded)'));
        else resolve();
      };
      this.held.push(resume);
      if (signal?.aborted) reject(abortError());
      signal?.addEventListener(
        'abort',
        () => {
          const index = this.held.indexOf(resume);
          if (index !== -1) this.held.splice(index, 1);
          reject(abortError());
        },
        { once: true },
      );
    });
  }

  private track(response: Response, isOut: boolean): Response {
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let ended = false;
    let fail: (error: unknown) => void = () => {};
    const end = () => {
      if (ended) return;
      ended = true;
      this.openOut.delete(fail);
      this.openBodies.delete(kill);
    };
    const kill = () => {
      fail(new TypeError('network error (the page was reloaded)'));
    };
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        fail = (error: unknown) => {
          if (ended) return;
          end();
          controller.error(error);
          reader.cancel(error).catch(() => {});
        };
        if (isOut) this.openOut.add(fail);
        this.openBodies.add(kill);
      },
      pull: async (controller) => {
        try {
          const { done, value } = await reader.read();
          if (ended) return;
          if (done) {
            end();
            controller.close();
          } else controller.enqueue(value);
        } catch (error) {
          if (ended) return;
          end();
          controller.error(error);
        }
      },
      cancel: (reason) => {
        end();
        return reader.cancel(reason);
      },
    });
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  }
}

// ---------------------------------------------------------------------------------------
// The world: one chat id, its pages, transports and Chats.

export interface Device {
  page: Page;
  transport: SessionChatTransport;
  chat: TestChat;
  errors: unknown[];
  persistence: SessionPersistence;
  /** Sends and resumes of this device's Chats, awaited at the end. */
  pending: Promise<unknown>[];
}

/** Every wait in a cell: far beyond what a healthy turn takes, short of a test timeout. */
export const BOUND_MS = 8_000;

export class World {
  readonly recorder = recordingFetch();
  readonly devices: Device[] = [];
  /** The device the user looks at (a reload or remount replaces it). */
  current: Device;
  readonly log: string[] = [];

  constructor(
    readonly server: DevServer,
    readonly chatId: string,
    /** A clock for every page (`virtualClock().environment`); default: real time. */
    readonly clock?: Pick<ClientEnvironment, 'now' | 'setTimeout' | 'clearTimeout'>,
  ) {
    this.current = this.device(memoryPersistence());
  }

  /** A new page: a transport under the library's default options, with `persistence`. */
  device(persistence: SessionPersistence, messages: UIMessage[] = []): Device {
    const page = new Page(this.recorder.fetch);
    const transport = new SessionChatTransport({
      baseURL: this.server.url,
      taskIdentifier: 'echo',
      startSession: startSessionVia(this.server),
      fetch: page.fetch,
      persistence,
      environment: { warn: () => {}, ...this.clock },
    });
    const device: Device = {
      page,
      transport,
      chat: undefined as unknown as TestChat,
      errors: [],
      persistence,
      pending: [],
    };
    device.chat = this.chatFor(device, messages);
    this.devices.push(device);
    return device;
  }

  /** A fresh Chat (a mount) on `device`'s transport, seeded with `messages`. */
  chatFor(device: Device, messages: UIMessage[]): TestChat {
    // Errors count for the Chat on screen only: an unmounted one's are nobody's to see.
    const errors: unknown[] = [];
    device.errors = errors;
    return new TestChat({
      id: this.chatId,
      transport: device.transport,
      messages: structuredClone(messages),
      onError: (error) => errors.push(error),
    });
  }

  /** What the app saved: every message except a reply still streaming (saved on finish). */
  saved(device: Device = this.current): UIMessage[] {
    const { chat } = device;
    const messages = chat.messages;
    const last = messages[messages.length - 1];
    if (last?.role === 'assistant' && (chat.status === 'streaming' || chat.status === 'submitted'))
      return structuredClone(messages.slice(0, -1));
    return structuredClone(messages);
  }

  send(text: string, device: Device = this.current): Promise<void> {
    const errors = device.errors;
    const sending = device.chat.sendMessage({ text }).catch((error: unknown) => {
      errors.push(error);
    });
    device.pending.push(sending);
    return sending;
  }

  resume(device: Device = this.current): Promise<void> {
    const errors = device.errors;
    const resuming = device.chat.resumeStream().catch((error: unknown) => {
      errors.push(error);
    });
    device.pending.push(resuming);
    return resuming;
  }

  /** Waits (bounded) for every send and resume of `device` to settle. */
  async settle(device: Device = this.current, what = 'the turn'): Promise<void> {
    let done = false;
    const all = Promise.all(device.pending).then(() => {
      done = true;
    });
    await waitFor(() => done, BOUND_MS, `${what} to settle (chat status ${device.chat.status})`);
    await all;
  }

  /** Turns this chat's agent has completed (turn-complete records written). */
  turnsCompleted(): number {
    return this.server.inspect(this.chatId)?.in.acknowledgedSeq ?? -1;
  }

  /** The page dies (a reload): its transport is closed, its network gone. */
  async killPage(device: Device): Promise<void> {
    await device.transport
      .getClient(this.chatId)
      .flushPersistence()
      .catch(() => {});
    device.transport.disconnect(this.chatId);
    device.transport.close();
    device.page.kill();
  }

  /** Closes every transport; resolves with the `.out` responses still open after a settle. */
  async close(): Promise<number> {
    for (const device of this.devices) device.transport.close();
    const deadline = Date.now() + 1_000;
    while (this.recorder.open() > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return this.recorder.open();
  }

  transcript(device: Device = this.current): string[] {
    return transcript(device.chat.messages);
  }
}
