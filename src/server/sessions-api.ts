import type { UIMessage } from 'ai';
import { ProtocolError } from '../errors/protocol-error.js';
import { ValidationError } from '../errors/validation-error.js';
import { SESSION_TYPE } from '../protocol/limits.js';
import type { CreateSessionRequest, CreateSessionResponse, SessionRow } from '../protocol/types.js';
import {
  validateCloseReason,
  validateCreateSessionRequest,
  validatePathSegment,
} from '../protocol/validate.js';
import { explainRejection } from './explain-rejection.js';
import { isWellFormedSecretKey } from './redact-secret.js';
import { requestUpstream, type UpstreamContext } from './request-upstream.js';
import { type RetryOptions, resolveRetryOptions } from './retry-delay.js';

export interface SessionsApiOptions {
  /** The session service, e.g. `https://api.trigger.dev` or a dev server's `url`. */
  baseURL: string;
  /** Secret API key. Sent only as a bearer token to `baseURL`; never in an error or log. */
  secretKey: string;
  /** Defaults to `globalThis.fetch`, read at call time. */
  fetch?: typeof fetch;
  /** Retries of 5xx, 429 and network failures (see `RetryOptions` for the defaults). */
  retry?: RetryOptions;
  /** Deadline of one attempt in ms. Default 30000. */
  timeoutMs?: number;
}

/** A create request; `type` may be left out (it is always `chat.agent`). */
export type CreateSessionInput<M extends UIMessage = UIMessage> = Omit<CreateSessionRequest<M>, 'type'> & {
  type?: 'chat.agent';
};

export interface SessionsRequestOptions {
  signal?: AbortSignal;
}

export interface SessionsApi {
  /**
   * Creates the session and its first run, or returns the live one for the same
   * (`taskIdentifier`, `externalId`) with `isCached: true` and a fresh token. The answer is
   * the session row: its `currentRunId` names the live run, `null` when none is (the run
   * ended, crashed or was cancelled; the next append starts a continuation), so a repeated
   * create doubles as the liveness check of a silent turn. Validated locally first
   * (`ValidationError`, nothing sent); a closed session throws `SessionClosedError` (with
   * `closedReason`). Retried on 5xx and network failures only with an `externalId`, since
   * without one every call makes a new session.
   */
  create<M extends UIMessage = UIMessage>(
    request: CreateSessionInput<M>,
    options?: SessionsRequestOptions,
  ): Promise<CreateSessionResponse<M>>;
  /**
   * Closes a session for good (`session_*` id or `externalId`). Idempotent: closing again
   * keeps the first reason. Resolves to the row when the service returns one.
   */
  close(sessionId: string, reason?: string, options?: SessionsRequestOptions): Promise<SessionRow | null>;
  /**
   * A fresh 60-minute `publicAccessToken` through a repeated create. Send the same request
   * as the first create: the service writes what a repeat sends onto the row. Creates the
   * session if it does not exist yet.
   */
  refreshToken<M extends UIMessage = UIMessage>(
    request: CreateSessionInput<M> & { externalId: string },
    options?: SessionsRequestOptions,
  ): Promise<string>;
}

function readCreateResponse<M extends UIMessage>(body: unknown): CreateSessionResponse<M> {
  const row = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  for (const key of ['id', 'publicAccessToken', 'runId'] as const) {
    if (typeof row[key] !== 'string' || row[key] === '') {
      throw new ProtocolError({
        code: 'UNEXPECTED_RESPONSE',
        message: `create session: the response has no "${key}" string`,
      });
    }
  }
  if (typeof row.isCached !== 'boolean') {
    throw new ProtocolError({
      code: 'UNEXPECTED_RESPONSE',
      message: 'create session: no "isCached" boolean',
    });
  }
  // The liveness source of a client's silent turn: a wrong type must not read as "no run".
  const current = row.currentRunId;
  if (current !== undefined && current !== null && typeof current !== 'string') {
    throw new ProtocolError({
      code: 'UNEXPECTED_RESPONSE',
      message: 'create session: "currentRunId" is neither a string nor null',
    });
  }
  return row as unknown as CreateSessionResponse<M>;
}

function resolveContext(options: SessionsApiOptions): UpstreamContext {
  if (typeof options.secretKey !== 'string' || options.secretKey.trim() === '') {
    throw new ValidationError({ field: 'secretKey', message: 'secretKey: must be a non-empty string' });
  }
  if (!isWellFormedSecretKey(options.secretKey)) {
    // The message names the problem, never the value: the key must not reach a log.
    throw new ValidationError({
      field: 'secretKey',
      message:
        'secretKey: must be visible ASCII with no whitespace or control characters (check for a stray newline)',
    });
  }
  let url: URL;
  try {
    url = new URL(options.baseURL);
  } catch {
    // The URL parser's own message adds nothing for the caller; the field name says it all.
    throw new ValidationError({ field: 'baseURL', message: 'baseURL: must be an absolute URL' });
  }
  return {
    baseURL: url.href.replace(/\/+$/, ''),
    secretKey: options.secretKey,
    fetch: options.fetch,
    retry: resolveRetryOptions(options.retry),
    timeoutMs: options.timeoutMs ?? 30_000,
  };
}

/** Session management with the secret key, for server runtimes (Node, edge, Bun, Deno). */
export function createSessionsApi(options: SessionsApiOptions): SessionsApi {
  const context = resolveContext(options);

  async function create<M extends UIMessage>(
    input: CreateSessionInput<M>,
    requestOptions?: SessionsRequestOptions,
  ): Promise<CreateSessionResponse<M>> {
    const request = { ...input, type: SESSION_TYPE };
    validateCreateSessionRequest(request);
    const operation = 'create session';
    const { body } = await requestUpstream(context, {
      path: '/api/v1/sessions',
      body: request,
      operation,
      idempotent: request.externalId !== undefined,
      signal: requestOptions?.signal,
    }).catch((error: unknown) => {
      throw explainRejection(error, {
        operation,
        baseURL: context.baseURL,
        taskIdentifier: request.taskIdentifier,
      });
    });
    return readCreateResponse<M>(body);
  }

  return {
    create,
    async close(sessionId, reason, requestOptions) {
      validatePathSegment(sessionId, 'sessionId');
      validateCloseReason(reason);
      const operation = 'close session';
      const { body } = await requestUpstream(context, {
        path: `/api/v1/sessions/${encodeURIComponent(sessionId)}/close`,
        body: reason === undefined ? {} : { reason },
        operation,
        idempotent: true,
        signal: requestOptions?.signal,
      }).catch((error: unknown) => {
        throw explainRejection(error, { operation, baseURL: context.baseURL });
      });
      const row = body as Record<string, unknown> | undefined;
      return typeof row?.id === 'string' ? (row as unknown as SessionRow) : null;
    },
    async refreshToken(request, requestOptions) {
      if (typeof request.externalId !== 'string' || request.externalId === '') {
        throw new ValidationError({
          field: 'externalId',
          message: 'externalId: a token refresh needs it; without it a create makes a new session',
        });
      }
      return (await create(request, requestOptions)).publicAccessToken;
    },
  };
}
