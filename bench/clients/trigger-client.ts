import { TriggerChatTransport } from '@trigger.dev/sdk/chat';
import type { ClientVariant } from './client-variant.js';

/**
 * The platform's own transport, driven through its public API only: the session is
 * hydrated with the token (as after a page load), so it never calls `startSession`.
 */
export function createTriggerVariant(): ClientVariant {
  let transport: TriggerChatTransport | undefined;
  const tokens = new Map<string, string>();
  const accessToken = ({ chatId }: { chatId: string }): string => tokens.get(chatId) ?? '';
  return {
    name: 'trigger',
    async send({ baseUrl, chatId, token, message, history }) {
      transport ??= new TriggerChatTransport({ task: 'bench', accessToken, baseURL: baseUrl });
      tokens.set(chatId, token);
      // Hydrated once per chat (a page load); a follow-up turn uses the session it kept.
      if (transport.getSession(chatId) === undefined)
        transport.setSession(chatId, { publicAccessToken: token });
      return transport.sendMessages({
        trigger: 'submit-message',
        chatId,
        messageId: undefined,
        messages: [...(history ?? []), message],
        abortSignal: undefined,
      });
    },
    dispose() {
      transport?.dispose();
    },
  };
}
