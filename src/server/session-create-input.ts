import type { ChatRouteCreateOptions } from './chat-route-handler.js';
import type { CreateSessionInput } from './sessions-api.js';

/** What both routes take to create a chat's session: the task and the app's extra fields. */
export interface SessionCreateSettings {
  taskIdentifier: string;
  createOptions?(
    request: Request,
    chatId: string,
    clientData: unknown,
  ): ChatRouteCreateOptions | undefined | Promise<ChatRouteCreateOptions | undefined>;
}

/**
 * The create call for `chatId`, its run started with `preload` (it boots now, before the
 * first message). `clientData` is what the browser sent, unless `createOptions` replaces it.
 */
export async function sessionCreateInput(
  settings: SessionCreateSettings,
  request: Request,
  chatId: string,
  browserData: unknown,
): Promise<{ input: CreateSessionInput; clientData: unknown }> {
  const extra = (await settings.createOptions?.(request, chatId, browserData)) ?? {};
  const clientData = 'clientData' in extra ? extra.clientData : browserData;
  const input: CreateSessionInput = {
    taskIdentifier: settings.taskIdentifier,
    externalId: chatId,
    triggerConfig: {
      ...extra.triggerConfig,
      basePayload: {
        chatId,
        trigger: 'preload',
        ...(clientData === undefined ? {} : { metadata: clientData }),
      },
    },
  };
  if (extra.tags !== undefined) input.tags = extra.tags;
  if (extra.metadata !== undefined) input.metadata = extra.metadata;
  if (extra.expiresAt !== undefined) input.expiresAt = extra.expiresAt;
  return { input, clientData };
}
