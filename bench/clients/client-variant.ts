import { pathToFileURL } from 'node:url';
import type { UIMessage, UIMessageChunk } from 'ai';
import type { DurableChatModule } from './durable-chat-client.js';

/** Where and as whom a client talks to the fixture (or dev) server. */
export interface TurnContext {
  baseUrl: string;
  chatId: string;
  /** The session's `publicAccessToken`, from a create call made before any timing. */
  token: string;
  /** That create's `isCached`, which an app's route hands to the browser with the token. */
  isCached?: boolean;
  message: UIMessage;
  /** The chat's earlier messages (a follow-up turn), sent before `message` as `useChat` does. */
  history?: UIMessage[];
}

/** One client under test, driven the way `useChat` drives a `ChatTransport`. */
export interface ClientVariant {
  name: VariantName;
  /** Sends the message; resolves to the reply's chunks, ending at the turn's end. */
  send(context: TurnContext): Promise<ReadableStream<UIMessageChunk>>;
  /** Releases timers and sockets the client may hold between turns. */
  dispose?(): void;
}

/**
 * `floor-stream`: the floor's chunks handed over through a `ReadableStream`, the shape every
 * `ChatTransport` must return; the gap between `floor` and `floor-stream` is the interface's
 * own cost, which no transport can avoid. `floor-overlap`: `floor-stream` with the read opened
 * while the append is in flight, as durable-chat does so that a held append never holds back a
 * reply (the scale scenario's comparator for memory). `durable-chat-unmerged`: the transport with
 * `coalesceDeltas: false`, one chunk per record like the floors. `durable-chat-devtools`: the
 * transport while the devtools panel's model watches (and records) every chat, as with
 * `<DurableChatDevtools />` mounted. `durable-chat-baseline`: the transport of another build
 * (`DURABLE_CHAT_BASELINE=<its dist/index.js>`), for an A/B of a change in one run;
 * `durable-chat-baseline-unmerged` the same build with `coalesceDeltas: false`.
 */
export type VariantName =
  | 'durable-chat'
  | 'durable-chat-unmerged'
  | 'durable-chat-devtools'
  | 'durable-chat-baseline'
  | 'durable-chat-baseline-unmerged'
  | 'trigger'
  | 'floor'
  | 'floor-stream'
  | 'floor-overlap';

export const VARIANT_NAMES: readonly VariantName[] = ['durable-chat', 'trigger', 'floor'];

export function userMessage(text: string): UIMessage {
  return { id: `user-${Math.random().toString(36).slice(2)}`, role: 'user', parts: [{ type: 'text', text }] };
}

export interface VariantOptions {
  /**
   * Chats of many turns: the floors keep each chat's cursor and read a follow-up turn from
   * the previous turn's end (the other clients keep their own state anyway).
   */
  followUps?: boolean;
}

/** Loads only the variant asked for, so a worker's memory holds one client's code. */
export async function loadVariant(name: VariantName, options: VariantOptions = {}): Promise<ClientVariant> {
  switch (name) {
    case 'durable-chat':
      return (await import('./durable-chat-client.js')).createDurableChatVariant();
    case 'durable-chat-unmerged':
      return (await import('./durable-chat-client.js')).createDurableChatVariant({ coalesceDeltas: false });
    case 'durable-chat-devtools': {
      const { DevtoolsModel } = await import('durable-chat/devtools');
      const stop = new DevtoolsModel().start();
      const variant = (await import('./durable-chat-client.js')).createDurableChatVariant();
      return {
        ...variant,
        name: 'durable-chat-devtools',
        dispose() {
          variant.dispose?.();
          stop();
        },
      };
    }
    case 'durable-chat-baseline':
    case 'durable-chat-baseline-unmerged': {
      const path = process.env.DURABLE_CHAT_BASELINE;
      if (path === undefined || path === '')
        throw new Error(
          "the 'durable-chat-baseline' variant needs DURABLE_CHAT_BASELINE=<another build's dist/index.js>",
        );
      const module = (await import(pathToFileURL(path).href)) as DurableChatModule;
      const options = name === 'durable-chat-baseline-unmerged' ? { coalesceDeltas: false } : {};
      return (await import('./durable-chat-client.js')).createDurableChatVariant(options, { module, name });
    }
    case 'trigger':
      return (await import('./trigger-client.js')).createTriggerVariant();
    case 'floor':
    case 'floor-stream':
      return (await import('./floor-client.js')).createFloorVariant({ followUps: options.followUps });
    case 'floor-overlap':
      return (await import('./floor-client.js')).createFloorVariant({
        overlapAppend: true,
        followUps: options.followUps,
      });
  }
}
