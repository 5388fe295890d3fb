import * as durableChat from 'durable-chat';
import type { ClientVariant, VariantName } from './client-variant.js';

/** What the variant takes from the package: this build, or another one (`durable-chat-baseline`). */
export type DurableChatModule = Pick<typeof durableChat, 'SessionChatTransport' | 'ConnectionError'>;

/**
 * durable-chat's transport, one instance for every chat as an app would hold it. Its
 * `startSession` hands back the token the bench created before timing, the same token
 * the platform's transport is hydrated with, so neither pays for a create call, with that
 * create's `isCached` as `createChatRouteHandler` passes it on.
 */
export function createDurableChatVariant(
  options: { coalesceDeltas?: boolean } = {},
  build: { module: DurableChatModule; name: VariantName } = { module: durableChat, name: 'durable-chat' },
): ClientVariant {
  const { SessionChatTransport, ConnectionError } = build.module;
  let transport: InstanceType<DurableChatModule['SessionChatTransport']> | undefined;
  const tokens = new Map<string, string>();
  const created = new Map<string, boolean | undefined>();
  const token = (chatId: string): string => {
    const value = tokens.get(chatId);
    if (value === undefined) {
      throw new ConnectionError({
        code: 'TOKEN_UNAVAILABLE',
        message: `no session created for chat ${chatId}`,
      });
    }
    return value;
  };
  return {
    name:
      build.name === 'durable-chat' && options.coalesceDeltas === false
        ? 'durable-chat-unmerged'
        : build.name,
    async send({ baseUrl, chatId, token: sessionToken, isCached, message, history }) {
      tokens.set(chatId, sessionToken);
      created.set(chatId, isCached);
      transport ??= new SessionChatTransport({
        baseURL: baseUrl,
        taskIdentifier: 'bench',
        startSession: async ({ chatId: id }) => {
          const cached = created.get(id);
          return cached === undefined
            ? { publicAccessToken: token(id) }
            : { publicAccessToken: token(id), isCached: cached };
        },
        getAccessToken: async ({ chatId: id }) => token(id),
        ...options,
      });
      return transport.sendMessages({
        trigger: 'submit-message',
        chatId,
        messageId: undefined,
        messages: [...(history ?? []), message],
        abortSignal: undefined,
      });
    },
    dispose() {
      transport?.close();
    },
  };
}
