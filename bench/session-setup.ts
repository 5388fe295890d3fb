import {
  type CreateSessionRequest,
  type CreateSessionResponse,
  httpErrorFromResponse,
  serializeAppend,
  userMessageChunk,
} from 'durable-chat';

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

/** Appends one user text message to the session's `.in` with its token; throws unless accepted. */
export async function appendUserText(
  baseUrl: string,
  chatId: string,
  token: string,
  message: { id: string; text: string },
): Promise<void> {
  const response = await fetch(`${baseUrl}/realtime/v1/sessions/${chatId}/in/append`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: serializeAppend(
      userMessageChunk({
        chatId,
        message: { id: message.id, role: 'user', parts: [{ type: 'text', text: message.text }] },
      }),
    ),
  });
  if (!response.ok) throw new Error(`append answered ${response.status}`);
}
