import type { ServerResponse } from 'node:http';

/**
 * Where an SSE stream's bytes go. On Node the dev server writes to the socket itself, so
 * a fault can cut the connection exactly after bytes were flushed; in-process (the plain
 * `fetch` handler) a ReadableStream stands in.
 */
export interface SseSink {
  /** Resolves once the bytes were handed to the transport. */
  write(data: string | Uint8Array): Promise<void>;
  /** Ends the response cleanly. */
  end(): void;
  /** Cuts the connection: the reader sees a dropped stream, not an end. */
  destroy(): void;
  readonly closed: boolean;
  onClose(listener: () => void): void;
}

export function nodeSink(response: ServerResponse, status: number, headers: Record<string, string>): SseSink {
  response.writeHead(status, headers);
  response.flushHeaders();
  const listeners: (() => void)[] = [];
  let closed = false;
  response.on('close', () => {
    closed = true;
    for (const listener of listeners) listener();
  });
  return {
    write(data) {
      if (closed) return Promise.resolve();
      return new Promise((resolve) => response.write(data, () => resolve()));
    },
    end() {
      if (!closed) response.end();
    },
    destroy() {
      response.socket?.destroy();
      response.destroy();
    },
    get closed() {
      return closed;
    },
    onClose(listener) {
      listeners.push(listener);
    },
  };
}

/** A sink over a ReadableStream: returns the stream to use as the Response body. */
export function streamSink(): { sink: SseSink; body: ReadableStream<Uint8Array> } {
  const encoder = new TextEncoder();
  const listeners: (() => void)[] = [];
  let closed = false;
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  const close = () => {
    if (closed) return;
    closed = true;
    for (const listener of listeners) listener();
  };
  const body = new ReadableStream<Uint8Array>({
    start(streamController) {
      controller = streamController;
    },
    cancel: close,
  });
  const sink: SseSink = {
    async write(data) {
      if (!closed) controller?.enqueue(typeof data === 'string' ? encoder.encode(data) : data);
    },
    end() {
      if (closed) return;
      controller?.close();
      close();
    },
    destroy() {
      if (closed) return;
      controller?.error(new TypeError('connection dropped (injected fault)'));
      close();
    },
    get closed() {
      return closed;
    },
    onClose(listener) {
      listeners.push(listener);
    },
  };
  return { sink, body };
}
