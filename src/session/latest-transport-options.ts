import type { SessionPersistence } from '../client/persistence.js';
import type { SessionChatTransportOptions } from '../transport/transport-options.js';
import type { ChatSessionOptions } from './chat-session-options.js';

/**
 * Transport options that read the hook's newest options on every use, so the app never
 * has to memoize its callbacks, headers or client data. What shapes the session object
 * itself (base URL, task, retry, environment, stream timeout) is taken once.
 */
export function latestTransportOptions(
  latest: () => ChatSessionOptions,
  persistence: SessionPersistence | undefined,
): SessionChatTransportOptions {
  const initial = latest();
  return {
    baseURL: initial.baseURL,
    taskIdentifier: initial.taskIdentifier,
    startSession: (input) => latest().startSession({ ...input, clientData: latest().clientData }),
    getAccessToken: async (input) => {
      const current = latest();
      if (current.getAccessToken !== undefined) return current.getAccessToken(input);
      const started = await current.startSession({
        chatId: input.chatId,
        taskIdentifier: current.taskIdentifier,
        clientData: current.clientData,
      });
      return started.publicAccessToken;
    },
    get clientData() {
      return latest().clientData;
    },
    headers: () => {
      const headers = latest().headers;
      return (typeof headers === 'function' ? headers() : headers) ?? {};
    },
    fetch: (input, init) => (latest().fetch ?? globalThis.fetch)(input, init),
    persistence,
    onEvent: (event) => {
      latest().onEvent?.(event);
    },
    streamTimeoutSeconds: initial.streamTimeoutSeconds,
    retry: initial.retry,
    get stopOnDisconnect() {
      return latest().stopOnDisconnect;
    },
    coalesceDeltas: initial.coalesceDeltas,
    environment: initial.environment,
    headStart: initial.headStart,
  };
}
