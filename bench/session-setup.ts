import { type CreateSessionRequest, type CreateSessionResponse, httpErrorFromResponse } from 'durable-chat';

/**
 * Creates a session the way an app's server would, before any timing starts, and returns
 * its `publicAccessToken`. The fixture server takes any caller; the dev server wants the
 * secret key.
 */
export async function createSession(
  baseUrl: string,
  chatId: string,
  options: { secretKey?: string; taskIdentifier?: string } = {},
): Promise<CreateSessionResponse> {
  const body: CreateSessionRequest = {
    type: 'chat.agent',
    taskIdentifier: options.taskIdentifier ?? 'bench',
    externalId: chatId,
    triggerConfig: { basePayload: { chatId, trigger: 'preload' } },
  };
  const response = await fetch(`${baseUrl}/api/v1/sessions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(options.secretKey === undefined ? {} : { authorization: `Bearer ${options.secretKey}` }),
    },
    body: JSON.stringify(body),
  });
  const parsed: unknown = await response.json().catch(() => undefined);
  if (!response.ok) {
    throw httpErrorFromResponse({ status: response.status, operation: 'create session', body: parsed });
  }
  return parsed as CreateSessionResponse;
}
