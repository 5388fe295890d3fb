/**
 * Fetch wrappers that change what the (real) dev server's answers look like on the wire,
 * for behaviours the server does not have: a server that omits the optional `seq` and
 * `session-in-event-id`, slow or never-answering requests, a 409 on `.out`.
 */

type Fetch = typeof fetch;

function urlOf(input: Parameters<Fetch>[0]): URL {
  return new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
}

const isAppend = (url: URL) => url.pathname.endsWith('/in/append');
const isOut = (url: URL) => url.pathname.endsWith('/out');

/** Removes the `session-in-event-id` header entries from every record of each SSE frame. */
function stripInEventIds(frame: string): string {
  return frame
    .replace(/,\["session-in-event-id","\d+"\]/g, '')
    .replace(/\["session-in-event-id","\d+"\],?/g, '');
}

/** A server that reports neither the append's `seq` nor `session-in-event-id` (both optional). */
export function withoutSeq(inner: Fetch = fetch): Fetch {
  return async (input, init) => {
    const url = urlOf(input);
    const response = await inner(input, init);
    if (isAppend(url)) {
      const text = await response.text();
      let body = text;
      try {
        const parsed = JSON.parse(text) as Record<string, unknown>;
        delete parsed.seq;
        body = JSON.stringify(parsed);
      } catch {
        // not JSON: pass it on as it is
      }
      return new Response(body, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    }
    if (!isOut(url) || response.body === null) return response;
    const decoder = new TextDecoder();
    const encoder = new TextEncoder();
    let buffer = '';
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          buffer += decoder.decode(chunk, { stream: true });
          const end = buffer.lastIndexOf('\n\n');
          if (end === -1) return;
          controller.enqueue(encoder.encode(stripInEventIds(buffer.slice(0, end + 2))));
          buffer = buffer.slice(end + 2);
        },
        flush(controller) {
          if (buffer !== '') controller.enqueue(encoder.encode(stripInEventIds(buffer)));
        },
      }),
    );
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

export interface RequestFilter {
  /** Which requests this applies to. */
  match: (url: URL, init: RequestInit | undefined) => boolean;
  /** How many matching requests it applies to (default 1). */
  times?: number;
}

/** Matching requests never answer until their signal aborts (a half-open connection). */
export function hanging(filter: RequestFilter, inner: Fetch = fetch): Fetch & { hung: () => number } {
  let left = filter.times ?? 1;
  let hung = 0;
  const wrapped = (async (input, init) => {
    const url = urlOf(input);
    if (left > 0 && filter.match(url, init)) {
      left--;
      hung++;
      return new Promise<Response>((_, reject) => {
        const signal = init?.signal;
        const abort = () => reject(new DOMException('aborted', 'AbortError'));
        if (signal?.aborted) abort();
        else signal?.addEventListener('abort', abort, { once: true });
      });
    }
    return inner(input, init);
  }) as Fetch & { hung: () => number };
  wrapped.hung = () => hung;
  return wrapped;
}

/** Matching responses are held back `ms` after the server answered (the request was stored). */
export function delayingResponses(filter: RequestFilter, ms: number, inner: Fetch = fetch): Fetch {
  let left = filter.times ?? 1;
  return async (input, init) => {
    const url = urlOf(input);
    const response = await inner(input, init);
    if (left > 0 && filter.match(url, init)) {
      left--;
      const text = await response.text();
      await new Promise((resolve) => setTimeout(resolve, ms));
      return new Response(text, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    }
    return response;
  };
}

/** Matching `.out` requests are answered 409 with the wire's closed body. */
export function closedOut(inner: Fetch = fetch): Fetch {
  return async (input, init) => {
    const url = urlOf(input);
    if (isOut(url)) {
      return new Response(
        JSON.stringify({ ok: false, error: 'session closed', code: 'session_closed', closedReason: 'done' }),
        {
          status: 409,
          headers: { 'content-type': 'application/json' },
        },
      );
    }
    return inner(input, init);
  };
}

export const appendRequests: RequestFilter['match'] = (url) => isAppend(url);
export const outRequests: RequestFilter['match'] = (url) => isOut(url);
