import { cleanup, render } from '@testing-library/react';
import type { UIMessage } from 'ai';
import { type ReactNode, StrictMode } from 'react';
import { fetch as undiciFetch } from 'undici';
import { afterEach } from 'vitest';
import { memoryPersistence, type PersistedChatRecord } from '../../../src/client/persistence.js';
import type { DevServer } from '../../../src/dev-server/index.js';
import {
  type UseDurableChatOptions,
  type UseDurableChatResult,
  useDurableChat,
} from '../../../src/react/use-durable-chat.js';
import { startSessionVia, transcript } from '../../transport/support/dev-server-fixture.js';

export { startEchoServer, transcript, waitFor } from '../../transport/support/dev-server-fixture.js';

// Updates arrive from the network, outside act(); tests observe them with waitFor.
(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = false;
// Without vitest globals, testing-library cannot register its own cleanup.
afterEach(() => cleanup());

let counter = 0;
export const nextChatId = (name: string) => `${name}-${++counter}-${Math.random().toString(36).slice(2, 8)}`;

/**
 * Node's fetch implementation. happy-dom's own fetch (which vitest installs as the global)
 * throws "Controller is already closed" when a streamed body is cancelled, so the chats
 * under test use undici (a dependency of the AI SDK) for their real loopback requests.
 */
export const nodeFetch = undiciFetch as unknown as typeof fetch;

export interface RecordedRequest {
  method: string;
  path: string;
  body: string | undefined;
}

/** `nodeFetch` with every request noted (the network stays real). */
/** The `kind` of every `.in` append among `requests`, in order (`message`, `stop`, …). */
export function appendKinds(requests: RecordedRequest[]): string[] {
  return requests
    .filter((request) => request.method === 'POST' && request.path.endsWith('/in/append'))
    .map((request) => (JSON.parse(request.body ?? 'null') as { kind: string }).kind);
}

export function recordingFetch(): { fetch: typeof fetch; requests: RecordedRequest[] } {
  const requests: RecordedRequest[] = [];
  const wrapped: typeof fetch = (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    requests.push({
      method: init?.method ?? 'GET',
      path: url.pathname,
      body: typeof init?.body === 'string' ? init.body : undefined,
    });
    return nodeFetch(input, init);
  };
  return { fetch: wrapped, requests };
}

/** Options for a chat against `server`: fast retries, page-memory persistence in `records`, tabs off. */
export function chatOptions(
  server: DevServer,
  chatId: string,
  records: Map<string, PersistedChatRecord> = new Map(),
  overrides: Partial<UseDurableChatOptions> = {},
): UseDurableChatOptions {
  return {
    chatId,
    baseURL: server.url,
    taskIdentifier: 'echo',
    startSession: startSessionVia(server),
    persistence: memoryPersistence(records),
    fetch: nodeFetch,
    retry: { initialDelayMs: 20, maxDelayMs: 200, stallTimeoutMs: 3_000 },
    environment: { warn: () => {} },
    tabs: false,
    ...overrides,
  };
}

export interface MountedChat {
  /** The hook's latest result. */
  readonly current: UseDurableChatResult;
  readonly renders: number;
  /** `sessionStatus.type` of every render, consecutive repeats removed. */
  readonly statuses: string[];
  /** `statusLabel` of every render, consecutive repeats removed. */
  readonly labels: string[];
  transcript(): string[];
  /** Re-renders with new options. */
  update(options: UseDurableChatOptions): void;
  unmount(): void;
  /**
   * Calls `action` with the latest result. Deliberately not inside act(): a send stays
   * pending for a whole turn and overlapping act scopes stall React's queue; tests wait
   * for the rendered outcome with waitFor instead.
   */
  run<T>(action: (chat: UseDurableChatResult) => Promise<T>): Promise<T>;
}

function Probe({
  probeOptions,
  onRender,
}: {
  probeOptions: UseDurableChatOptions;
  onRender: (result: UseDurableChatResult) => void;
}) {
  const result = useDurableChat(probeOptions);
  onRender(result);
  return <output data-status={result.sessionStatus.type}>{result.statusLabel}</output>;
}

export interface MountOptions {
  strict?: boolean;
  /** Wraps the chat's component (a Suspense boundary, say) on every render. */
  wrap?: (node: ReactNode) => ReactNode;
}

/** Mounts one component that calls `useDurableChat(options)`, in its own React root. */
export function mountChat(
  options: UseDurableChatOptions,
  { strict = false, wrap = (node: ReactNode) => node }: MountOptions = {},
): MountedChat {
  const seen: { result: UseDurableChatResult | undefined; renders: number } = {
    result: undefined,
    renders: 0,
  };
  const statuses: string[] = [];
  const labels: string[] = [];
  const note = (list: string[], value: string) => {
    if (list.at(-1) !== value) list.push(value);
  };
  const onRender = (result: UseDurableChatResult) => {
    seen.result = result;
    seen.renders += 1;
    note(statuses, result.sessionStatus.type);
    note(labels, result.statusLabel);
  };
  const tree = (next: UseDurableChatOptions) =>
    wrap(
      strict ? (
        <StrictMode>
          <Probe probeOptions={next} onRender={onRender} />
        </StrictMode>
      ) : (
        <Probe probeOptions={next} onRender={onRender} />
      ),
    );
  const view = render(tree(options));
  const current = () => {
    if (seen.result === undefined) throw new Error('the chat has not rendered');
    return seen.result;
  };
  return {
    get current() {
      return current();
    },
    get renders() {
      return seen.renders;
    },
    statuses,
    labels,
    transcript: () => transcript(current().messages as UIMessage[]),
    update: (next) => view.rerender(tree(next)),
    unmount: () => view.unmount(),
    run: (action) => action(current()),
  };
}
