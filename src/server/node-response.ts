// The shapes of Node's `IncomingMessage` and `ServerResponse` this package uses, declared
// here so that `durable-chat/server` needs no `node:` import (it stays runtime-neutral) and
// its types need no `@types/node`. Node's own objects, Express's and connect's fit them.

/** What the Node handler reads of a request (`http.IncomingMessage` fits). */
export interface NodeRequestLike {
  method?: string | undefined;
  url?: string | undefined;
  /** Express: the URL before a router mounted at a path cut its prefix. */
  originalUrl?: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  /** A TLS socket (`encrypted: true`) makes the Request's URL `https:`. */
  socket?: unknown;
  /** A body a framework already parsed (Express `express.json()`, Fastify's `request.body`). */
  body?: unknown;
  /** True once the body stream ended: read by someone else when `body` is not given. */
  readonly readableEnded?: boolean;
  on(event: 'data', listener: (chunk: Uint8Array | string) => void): unknown;
  once(event: 'end', listener: () => void): unknown;
  once(event: 'error', listener: (error: unknown) => void): unknown;
  off(event: 'data', listener: (chunk: Uint8Array | string) => void): unknown;
  off(event: 'end', listener: () => void): unknown;
  off(event: 'error', listener: (error: unknown) => void): unknown;
  /** Lets the unread rest of a refused body flow away. */
  resume?(): unknown;
}

/** What the Node handler writes to (`http.ServerResponse` fits). */
export interface NodeResponseLike {
  statusCode: number;
  readonly headersSent: boolean;
  readonly writableFinished: boolean;
  readonly destroyed?: boolean;
  setHeader(name: string, value: string | string[]): unknown;
  flushHeaders?(): void;
  write(chunk: Uint8Array): boolean;
  end(callback?: () => void): unknown;
  /** Cuts the connection: a body that failed midway must not look complete. */
  destroy?(error?: Error): unknown;
  once(event: 'close' | 'drain' | 'error', listener: () => void): unknown;
  off?(event: 'close' | 'drain' | 'error', listener: () => void): unknown;
}

/** Resolves on the response's `drain`, or on `close` (the client left: stop writing). */
function drained(res: NodeResponseLike): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off?.('drain', done);
      res.off?.('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}

/**
 * Writes a Fetch `Response` to a Node response: status, headers (each `set-cookie` apart),
 * then the body chunk by chunk as it comes, waiting for `drain` when the socket is full. The
 * body is cancelled when the client goes away. Resolves once the response ended or was cut.
 */
export async function writeResponse(response: Response, res: NodeResponseLike): Promise<void> {
  res.statusCode = response.status;
  const cookies = response.headers.getSetCookie();
  for (const [name, value] of response.headers) if (name !== 'set-cookie') res.setHeader(name, value);
  if (cookies.length > 0) res.setHeader('set-cookie', cookies);
  if (response.body === null) {
    await new Promise<void>((resolve) => res.end(resolve));
    return;
  }
  // A streamed answer shows its headers at once, before its first chunk.
  res.flushHeaders?.();
  const reader = response.body.getReader();
  const onClose = () => {
    reader.cancel().catch(() => {
      // The body's own source failed while being cancelled: nobody is left to tell.
    });
  };
  res.once('close', onClose);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (res.destroyed === true) return;
      if (!res.write(value)) await drained(res);
    }
    if (res.destroyed !== true) await new Promise<void>((resolve) => res.end(resolve));
  } finally {
    res.off?.('close', onClose);
  }
}
