import { useChat } from '@ai-sdk/react';
import { render } from '@testing-library/react';
import type { UIMessage } from 'ai';
import { type ReactNode, StrictMode } from 'react';
import { memoryPersistence, type PersistedChatRecord } from '../../../src/client/persistence.js';
import type { DevServer } from '../../../src/dev-server/index.js';
import { type UseChatSessionResult, useChatSession } from '../../../src/react/use-chat-session.js';
import { useFollowTurns } from '../../../src/react/use-follow-turns.js';
import type { ChatSessionOptions } from '../../../src/session/chat-session-options.js';
import { startSessionVia, transcript } from '../../transport/support/dev-server-fixture.js';
import { type MountOptions, nodeFetch } from './harness.js';

/** Session options with the library's defaults (retry, timeouts): memory persistence in `records`, tabs off. */
export function sessionOptions(
  server: DevServer,
  chatId: string,
  records: Map<string, PersistedChatRecord> = new Map(),
  overrides: Partial<ChatSessionOptions> = {},
): ChatSessionOptions {
  return {
    chatId,
    baseURL: server.url,
    taskIdentifier: 'echo',
    startSession: startSessionVia(server),
    persistence: memoryPersistence(records),
    fetch: nodeFetch,
    environment: { warn: () => {} },
    tabs: false,
    ...overrides,
  };
}

type Helpers = ReturnType<typeof useChat>;
/** `useChat`'s options without the shared chat (`@ai-sdk/react` bundles its own copy of `ai`'s types). */
type ChatInit = Exclude<Parameters<typeof useChat>[0], { chat: unknown } | undefined>;

export interface PlainChatProps {
  session: ChatSessionOptions;
  /** Options for `useChat` besides the transport (id defaults to `session.id`; pass `id: null` to leave it out). */
  chat?: Omit<ChatInit, 'transport' | 'id'> & { id?: string | null };
}

export interface MountedPlainChat {
  readonly session: UseChatSessionResult;
  readonly chat: Helpers;
  readonly renders: number;
  /** `session.status.type` of every render, consecutive repeats removed. */
  readonly statuses: string[];
  transcript(): string[];
  update(props: PlainChatProps): void;
  unmount(): void;
}

function PlainChat({
  props,
  onRender,
}: {
  props: PlainChatProps;
  onRender: (session: UseChatSessionResult, chat: Helpers) => void;
}) {
  const session = useChatSession(props.session);
  const { id, ...chatOptions } = props.chat ?? {};
  const chat = useChat({
    ...(id === null ? {} : { id: id ?? session.id }),
    transport: session.transport,
    ...chatOptions,
  } as ChatInit);
  useFollowTurns(session, chat);
  onRender(session, chat);
  return null;
}

/** Mounts `useChatSession` + the AI SDK's own `useChat({ id: session.id, transport: session.transport })`. */
export function mountPlainChat(
  props: PlainChatProps,
  { strict = false, wrap = (node: ReactNode) => node }: MountOptions = {},
): MountedPlainChat {
  const seen: { session?: UseChatSessionResult; chat?: Helpers; renders: number } = { renders: 0 };
  const statuses: string[] = [];
  const onRender = (session: UseChatSessionResult, chat: Helpers) => {
    seen.session = session;
    seen.chat = chat;
    seen.renders += 1;
    if (statuses.at(-1) !== session.status.type) statuses.push(session.status.type);
  };
  const tree = (next: PlainChatProps) =>
    wrap(
      strict ? (
        <StrictMode>
          <PlainChat props={next} onRender={onRender} />
        </StrictMode>
      ) : (
        <PlainChat props={next} onRender={onRender} />
      ),
    );
  const view = render(tree(props));
  const need = <T,>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the chat has not rendered');
    return value;
  };
  return {
    get session() {
      return need(seen.session);
    },
    get chat() {
      return need(seen.chat);
    },
    get renders() {
      return seen.renders;
    },
    statuses,
    transcript: () => transcript(need(seen.chat).messages as UIMessage[]),
    update: (next) => view.rerender(tree(next)),
    unmount: () => view.unmount(),
  };
}
