import { ConfigurationError } from '../errors/configuration-error.js';
import { HttpError } from '../errors/http-error.js';

/**
 * Turns the service's answers that mean "this server is set up wrong" into errors that say
 * so. Calls made with the secret key cannot fail on a token, so a 401 or 403 is the key
 * itself; a create cannot miss its session (it makes one), so its 404 is the task id.
 * Anything else is returned unchanged.
 */
export function explainRejection(
  error: unknown,
  call: { operation: string; baseURL: string; taskIdentifier?: string },
): unknown {
  if (!(error instanceof HttpError)) return error;
  const said = error.serverMessage === undefined ? '' : `: ${error.serverMessage}`;
  const answer = `HTTP ${error.status}${said}`;
  if (error.status === 401 || error.status === 403) {
    return new ConfigurationError({
      code: 'SECRET_KEY_REJECTED',
      field: 'secretKey',
      status: error.status,
      message:
        `${call.operation}: the session service at ${call.baseURL} rejected the secret key (${answer}). ` +
        'Set secretKey to a secret key of that service; `durable-chat dev` prints its key at start ' +
        'and keeps it in its data folder (.durable-chat/secret-key).',
      cause: error,
    });
  }
  if (error.status === 404 && call.taskIdentifier !== undefined) {
    return new ConfigurationError({
      code: 'TASK_NOT_FOUND',
      field: 'taskIdentifier',
      status: 404,
      message:
        `${call.operation}: the session service at ${call.baseURL} has no task "${call.taskIdentifier}" (${answer}). ` +
        'Set taskIdentifier to the id of a deployed chat-agent task; `durable-chat dev --agents` serves ' +
        'only the ids its module exports.',
      cause: error,
    });
  }
  return error;
}
