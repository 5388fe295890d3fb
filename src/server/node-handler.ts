import { ConfigurationError } from '../errors/configuration-error.js';
import { type ChatRouteHandlerOptions, createChatRouteHandler } from './chat-route-handler.js';
import { type NodeRequestLike, type NodeResponseLike, writeResponse } from './node-response.js';
import { errorResponse } from './route-responses.js';

export type { NodeRequestLike, NodeResponseLike } from './node-response.js';

/** A `(req, res)` handler for `node:http`, Express, connect and Fastify's `request.raw` / `reply.raw`. */
export type NodeHandler = (req: NodeRequestLike, res: NodeResponseLike) => Promise<void>;

export interface NodeHandlerOptions {
  /** Largest accepted request body in bytes; over it the answer is 413 `PAYLOAD_TOO_LARGE`. Default 65536. */
  maxBodyBytes?: number;
  /** Called when the Fetch handler throws (then the answer is 500 `INTERNAL_ERROR`). Default: `console.error`. */
  onError?(error: unknown): void;
}

const DEFAULT_MAX_BODY_BYTES = 65_536;

function reportError(error: unknown): void {
  const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  console.error(`[durable-chat/server] node handler failed: ${detail}`);
}

/**
 * The chat route (`createChatRouteHandler`) as a Node `(req, res)` handler: the same
 * options, the same answers and error codes.
 *
 * ```ts
 * createServer(createNodeChatRouteHandler(options));               // node:http
 * app.post('/api/chat-session', createNodeChatRouteHandler(options)); // Express
 * ```
 */
export function createNodeChatRouteHandler(options: ChatRouteHandlerOptions): NodeHandler {
  return toNodeHandler(createChatRouteHandler(options), { maxBodyBytes: options.maxBodyBytes });
}

/**
 * Serves a Fetch-API handler from Node's `http` server: the request body is read up to
 * `maxBodyBytes` (a larger one is answered 413 without reading on), the request's `signal`
 * aborts when the client goes away, and the response body streams with backpressure.
 * A body a framework already parsed (`req.body`: Express's `express.json()`, Fastify) is
 * used as it is.
 */
export function toNodeHandler(
  handler: (request: Request) => Promise<Response>,
  options: NodeHandlerOptions = {},
): NodeHandler {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const onError = options.onError ?? reportError;
  return async function nodeHandler(req, res) {
    // Aborted when the client leaves before the answer is written: upstream calls stop too.
    const aborted = new AbortController();
    const onClose = () => {
      if (!res.writableFinished) aborted.abort();
    };
    res.once('close', onClose);
    try {
      await answer(req, res, aborted.signal);
    } catch (error) {
      // The client left mid-request: nobody to answer and nothing of the server's to fix.
      if (aborted.signal.aborted) return;
      onError(error);
      // Never a rejected promise: `node:http` would report it as unhandled.
      if (!res.headersSent) await writeResponse(internalError(), res).catch(onError);
      else res.destroy?.();
    } finally {
      res.off?.('close', onClose);
    }
  };

  async function answer(req: NodeRequestLike, res: NodeResponseLike, signal: AbortSignal): Promise<void> {
    if (req.body === undefined && req.readableEnded === true) {
      // Waiting for a stream that already ended would hold the request (and the server's
      // close) forever; the setup is to fix, so say where.
      onError(bodyAlreadyRead());
      const text = "the chat route is not set up; the server's log says how to fix it";
      await writeResponse(errorResponse(500, 'INVALID_CONFIG', text), res);
      return;
    }
    const body = await readRequestBody(req, maxBodyBytes);
    if (body === 'too-large') {
      // The rest of the body is not read: the connection closes after this answer.
      const headers = { connection: 'close' };
      await writeResponse(
        errorResponse(413, 'PAYLOAD_TOO_LARGE', `the body is over ${maxBodyBytes} bytes`, headers),
        res,
      );
      req.resume?.();
      return;
    }
    let response: Response;
    try {
      response = await handler(toRequest(req, body, signal));
    } catch (error) {
      onError(error);
      response = internalError();
    }
    await writeResponse(response, res);
  }
}

const internalError = () => errorResponse(500, 'INTERNAL_ERROR', 'the chat route failed');

function bodyAlreadyRead(): ConfigurationError {
  return new ConfigurationError({
    code: 'INVALID_CONFIG',
    field: 'req.body',
    message:
      'the request body was already read before the chat route ran (a body parser, Fastify) and not handed on: ' +
      'pass the parsed body as req.body (Fastify: Object.assign(request.raw, { body: request.body })), or leave the body unread',
  });
}

function headersOf(req: NodeRequestLike): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    // HTTP/2 pseudo-headers (`:path`) are not headers a Request may carry.
    if (value === undefined || name.startsWith(':')) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  return headers;
}

function toRequest(
  req: NodeRequestLike,
  body: Uint8Array<ArrayBuffer> | undefined,
  signal: AbortSignal,
): Request {
  const headers = headersOf(req);
  const host = headers.get('host') ?? 'localhost';
  const socket = req.socket as { encrypted?: unknown } | null | undefined;
  const scheme = socket?.encrypted === true ? 'https' : 'http';
  const method = (req.method ?? 'GET').toUpperCase();
  const withBody = body !== undefined && method !== 'GET' && method !== 'HEAD';
  // The body was read and measured here; the Fetch handler must not see a stale length.
  headers.delete('content-length');
  headers.delete('transfer-encoding');
  return new Request(`${scheme}://${host}${req.originalUrl ?? req.url ?? '/'}`, {
    method,
    headers,
    body: withBody ? body : null,
    signal,
  });
}

const encoder = new TextEncoder();

/**
 * The request body's bytes, `undefined` when there is none, or `'too-large'` as soon as it
 * passes `maxBytes` (by its declared length or by what arrived), without reading on.
 */
async function readRequestBody(
  req: NodeRequestLike,
  maxBytes: number,
): Promise<Uint8Array<ArrayBuffer> | undefined | 'too-large'> {
  if (req.body !== undefined) return parsedBody(req.body, maxBytes);
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) return 'too-large';
  const chunks: Uint8Array[] = [];
  let total = 0;
  const outcome = await new Promise<'done' | 'too-large'>((resolve, reject) => {
    const finish = (result: 'done' | 'too-large') => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onFailure);
      resolve(result);
    };
    const onData = (data: Uint8Array | string) => {
      const chunk = typeof data === 'string' ? encoder.encode(data) : data;
      total += chunk.byteLength;
      if (total > maxBytes) finish('too-large');
      else chunks.push(chunk);
    };
    const onEnd = () => finish('done');
    const onFailure = (error: unknown) => {
      req.off('data', onData);
      req.off('end', onEnd);
      reject(error);
    };
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onFailure);
  });
  if (outcome === 'too-large') return outcome;
  if (total === 0) return undefined;
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/** A body a framework parsed before this handler ran, as bytes again. */
function parsedBody(body: unknown, maxBytes: number): Uint8Array<ArrayBuffer> | undefined | 'too-large' {
  let bytes: Uint8Array<ArrayBuffer>;
  // Copied: a framework's buffer may be a view into a shared pool.
  if (body instanceof Uint8Array) bytes = new Uint8Array(body);
  else if (typeof body === 'string') bytes = encoder.encode(body);
  else if (body === null) return undefined;
  else bytes = encoder.encode(JSON.stringify(body));
  return bytes.byteLength > maxBytes ? 'too-large' : bytes;
}
