import {
  AbstractChat,
  type ChatInit,
  type ChatState,
  type ChatStatus,
  lastAssistantMessageIsCompleteWithToolCalls,
  type UIMessage,
} from 'ai';
import type { PersistedChatRecord, SessionPersistence } from '../../../src/client/persistence.js';
import type { DevServer } from '../../../src/dev-server/index.js';
import { ChatSessionHandle } from '../../../src/session/chat-session-handle.js';
import type { ChatSessionOptions } from '../../../src/session/chat-session-options.js';
import { TurnFollow } from '../../../src/session/turn-follow.js';
import { recordingFetch, startSessionVia, transcript } from '../../transport/support/dev-server-fixture.js';
import { Page } from '../../transport/support/moments.js';
import { MemoryLocks } from './memory-locks.js';

/**
 * Tabs of one browser without React: each tab is the session core a binding mounts
 * (`ChatSessionHandle`, its tab life and guarded transport, `TurnFollow`) under the AI SDK's
 * own `Chat` logic, wired as `useChatSession` + `useChat({ resume: true })` + `useFollowTurns`
 * wire them, with the README's guards in the app's callbacks. The tabs share one storage (a
 * JSON record per chat, as localStorage), one lock manager (or none: the BroadcastChannel lease)
 * and Node's global BroadcastChannel. Each has its own network (`Page`: holds, reload).
 */

/** A chat state that tells every status change, as React renders then runs the hooks' effects. */
class ObservedChatState<M extends UIMessage> implements ChatState<M> {
  private current: ChatStatus = 'ready';
  error: Error | undefined = undefined;
  messages: M[];
  constructor(
    messages: M[],
    private readonly onStatus: () => void,
  ) {
    this.messages = messages;
  }
  get status(): ChatStatus {
    return this.current;
  }
  set status(next: ChatStatus) {
    if (next === this.current) return;
    this.current = next;
    this.onStatus();
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

class ObservedChat extends AbstractChat<UIMessage> {
  constructor(init: ChatInit<UIMessage>, onStatus: () => void) {
    super({ ...init, state: new ObservedChatState<UIMessage>(init.messages ?? [], onStatus) });
  }
}

/** One JSON string per chat, as localStorage keeps it: every tab reads its own copy. */
export function sharedStorage(): { adapter: SessionPersistence; records: Map<string, string> } {
  const records = new Map<string, string>();
  return {
    records,
    adapter: {
      id: 'shared-test-storage',
      load: (chatId) => {
        const raw = records.get(chatId);
        return raw === undefined ? undefined : (JSON.parse(raw) as PersistedChatRecord);
      },
      save: (chatId, record) => {
        records.set(chatId, JSON.stringify(record));
      },
      remove: (chatId) => {
        records.delete(chatId);
      },
    },
  };
}

export type TabMode = 'Web Locks' | 'BroadcastChannel only';

/** What the tabs' app did: tool calls answered, transcripts saved (README rules), errors. */
export interface AppLog {
  calls: string[];
  saves: { tab: string; texts: string[] }[];
  errors: { tab: string; error: unknown }[];
}

const textOf = (messages: readonly UIMessage[]) =>
  messages.map((message) => message.parts.map((part) => (part.type === 'text' ? part.text : '')).join(''));

export class CoreTab {
  readonly handle: ChatSessionHandle;
  readonly chat: ObservedChat;
  readonly follow: TurnFollow<UIMessage>;
  readonly page: Page;
  private readonly unmounts: (() => void)[] = [];
  /** The resume `useChat({ resume: true })` starts on mount (a user acts once it settled). */
  readonly mounted: Promise<void>;
  closed = false;

  constructor(
    readonly name: string,
    world: TabsWorld,
    messages: UIMessage[],
    persistence: SessionPersistence,
  ) {
    this.page = new Page(world.recorder.fetch);
    const options: ChatSessionOptions = {
      chatId: world.chatId,
      baseURL: world.server.url,
      taskIdentifier: 'echo',
      startSession: startSessionVia(world.server),
      persistence,
      fetch: this.page.fetch,
      environment: { warn: () => {} },
      tabs: world.locks === null ? { locks: null } : { locks: world.locks },
    };
    const handle = new ChatSessionHandle(options);
    this.handle = handle;
    const following = () => handle.followedRequests > 0;
    const { log } = world;
    this.chat = new ObservedChat(
      {
        id: world.chatId,
        transport: handle.transport,
        messages: structuredClone(messages),
        onError: (error) => log.errors.push({ tab: name, error }),
        onToolCall: ({ toolCall }) => {
          if (following()) return;
          log.calls.push(name);
          void this.chat.addToolOutput({
            tool: 'askUser' as never,
            toolCallId: toolCall.toolCallId,
            output: `green from ${name}` as never,
          });
        },
        sendAutomaticallyWhen: (input) => !following() && lastAssistantMessageIsCompleteWithToolCalls(input),
        onFinish: ({ messages: finished, isAbort, isError }) => {
          if (isAbort || isError || following()) return;
          log.saves.push({ tab: name, texts: textOf(finished) });
        },
      },
      // A binding's effects run after the render that shows the new status.
      () => setTimeout(() => this.follow.observe(), 0),
    );
    const chat = this.chat;
    this.follow = new TurnFollow(handle, () => ({
      get status() {
        return chat.status;
      },
      get error() {
        return chat.error;
      },
      get messages() {
        return chat.messages;
      },
      // As useChat's: an update function gets the chat's messages as they are now.
      setMessages: (next) => {
        chat.messages = typeof next === 'function' ? next(chat.messages) : next;
      },
      resumeStream: () => chat.resumeStream(),
    }));
    // The effects of useChatSession, useChat({ resume: true }) and useFollowTurns, in that order.
    this.unmounts.push(handle.attach());
    this.mounted = chat.resumeStream().catch(() => {});
    this.unmounts.push(this.follow.attach());
    this.follow.observe();
  }

  send(text: string): Promise<void> {
    return this.chat.sendMessage({ text }).catch(() => {});
  }

  transcript(): string[] {
    return transcript(this.chat.messages);
  }

  get busy(): boolean {
    return this.chat.status === 'submitted' || this.chat.status === 'streaming';
  }

  /** What the app saved at this moment: every message except a reply still streaming. */
  saved(): UIMessage[] {
    const messages = this.chat.messages;
    const last = messages.at(-1);
    if (last?.role === 'assistant' && this.busy) return structuredClone(messages.slice(0, -1));
    return structuredClone(messages);
  }

  /** The component unmounts (its effects' cleanups, in reverse order). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const unmount of this.unmounts.splice(0).reverse()) unmount();
  }

  /** The page goes away (a reload): what it saved is saved, then its network is gone. */
  async kill(): Promise<void> {
    await this.handle.client.flushPersistence().catch(() => {});
    this.close();
    this.page.kill();
  }
}

export class TabsWorld {
  readonly recorder = recordingFetch();
  readonly storage = sharedStorage();
  readonly locks: MemoryLocks | null;
  readonly log: AppLog = { calls: [], saves: [], errors: [] };
  readonly tabs: CoreTab[] = [];

  constructor(
    readonly server: DevServer,
    readonly chatId: string,
    mode: TabMode,
  ) {
    this.locks = mode === 'Web Locks' ? new MemoryLocks() : null;
  }

  open(name: string, messages: UIMessage[] = [], persistence = this.storage.adapter): CoreTab {
    const tab = new CoreTab(name, this, messages, persistence);
    this.tabs.push(tab);
    return tab;
  }

  /** A reload of `tab`: the page dies, a new one opens on the app's saved messages. */
  async reload(tab: CoreTab, name = `${tab.name}'`): Promise<CoreTab> {
    const saved = tab.saved();
    await tab.kill();
    return this.open(name, saved);
  }

  /** Appends the agent got (`.in` records of the chat's session, consumed or not; seqs count from 0). */
  appendsStored(): number {
    return this.server.inspect(this.chatId)?.in.nextSeq ?? 0;
  }

  /** Closes every tab; resolves with the `.out` responses still open a while after. */
  async close(): Promise<number> {
    for (const tab of this.tabs) tab.close();
    const deadline = Date.now() + 2_000;
    while (this.recorder.open() > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return this.recorder.open();
  }
}
