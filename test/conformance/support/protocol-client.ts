import { EVENT_STREAM, HEADER } from '../../../src/protocol/index.js';
import type { ResolvedConformanceTarget } from './conformance-target.js';

/** A response as the cases inspect it: status, headers and the body parsed when it is JSON. */
export interface WireResponse<BODY = Record<string, unknown>> {
  status: number;
  headers: Headers;
  /** The JSON body, or undefined when the body was empty or not JSON (see `text`). */
  body: BODY | undefined;
  text: string;
}

/** `undefined` sends the default credential; `null` sends no `Authorization` header. */
export type Credential = string | null | undefined;

async function toWireResponse<BODY>(response: Response): Promise<WireResponse<BODY>> {
  const text = await response.text();
  let body: BODY | undefined;
  if (text !== '') {
    try {
      body = JSON.parse(text) as BODY;
    } catch {
      // Not JSON: the cases that care read `text`, the rest assert on `body` being undefined.
      body = undefined;
    }
  }
  return { status: response.status, headers: response.headers, body, text };
}

function authHeaders(credential: string | null): Record<string, string> {
  return credential === null ? {} : { [HEADER.authorization]: `Bearer ${credential}` };
}

/**
 * Raw protocol calls over real HTTP. Nothing here validates or retries: the suite must see
 * exactly what the server answers.
 */
export class ProtocolClient {
  /** Ids of every session this client created, so the suite can close them afterwards. */
  readonly createdSessionIds = new Set<string>();

  constructor(private readonly target: ResolvedConformanceTarget) {}

  url(path: string): string {
    return `${this.target.baseURL}${path}`;
  }

  /** `POST /api/v1/sessions`; the secret key unless `auth` says otherwise. */
  async createSession(body: unknown, auth: Credential = undefined): Promise<WireResponse> {
    const response = await fetch(this.url('/api/v1/sessions'), {
      method: 'POST',
      headers: {
        ...authHeaders(auth === undefined ? this.target.secretKey : auth),
        [HEADER.contentType]: 'application/json',
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const wire = await toWireResponse<Record<string, unknown>>(response);
    if (wire.status === 201 && typeof wire.body?.id === 'string') this.createdSessionIds.add(wire.body.id);
    return wire;
  }

  /** `POST /api/v1/sessions/{id}/close`; `body` undefined sends no body at all. */
  async closeSession(sessionId: string, body?: unknown, auth: Credential = undefined): Promise<WireResponse> {
    const headers: Record<string, string> = authHeaders(auth === undefined ? this.target.secretKey : auth);
    if (body !== undefined) headers[HEADER.contentType] = 'application/json';
    const response = await fetch(this.url(`/api/v1/sessions/${encodeURIComponent(sessionId)}/close`), {
      method: 'POST',
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return toWireResponse(response);
  }

  /** `POST /realtime/v1/sessions/{id}/in/append` with a chunk (or a raw string body). */
  async append(
    session: string,
    chunk: unknown,
    options: { token: string | null; partId?: string; headers?: Record<string, string> },
  ): Promise<WireResponse> {
    const headers: Record<string, string> = {
      ...authHeaders(options.token),
      [HEADER.contentType]: 'application/json',
      ...options.headers,
    };
    if (options.partId !== undefined) headers[HEADER.partId] = options.partId;
    const response = await fetch(this.url(`/realtime/v1/sessions/${encodeURIComponent(session)}/in/append`), {
      method: 'POST',
      headers,
      body: typeof chunk === 'string' ? chunk : JSON.stringify(chunk),
    });
    return toWireResponse(response);
  }

  /** A `.out` request that is expected to be refused: reads the whole (short) answer. */
  async outRefusal(session: string, token: string | null, accept: string | null = EVENT_STREAM) {
    const headers: Record<string, string> = authHeaders(token);
    if (accept !== null) headers[HEADER.accept] = accept;
    // A short deadline so a server that wrongly accepts still ends the request quickly.
    headers[HEADER.timeoutSeconds] = '1';
    const response = await fetch(this.url(`/realtime/v1/sessions/${encodeURIComponent(session)}/out`), {
      headers,
    });
    return toWireResponse(response);
  }
}
