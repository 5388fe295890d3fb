/**
 * When each text delta reached the client: a `fetch` wrapper that watches the `.out`
 * response bodies as their bytes arrive (before any parsing) and notes the time of every
 * `text-delta` record in them. The fixture turn's delta text never contains that word, so
 * counting it counts records; a record split across two reads is counted when it completes.
 */
export interface ArrivalClock {
  fetch: typeof globalThis.fetch;
  /** `performance.now()` of every text-delta record, in stream order. */
  readonly arrivals: number[];
}

const MARK = 'text-delta';

export function arrivalClock(inner: typeof globalThis.fetch = globalThis.fetch): ArrivalClock {
  const arrivals: number[] = [];
  const watch = (body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> => {
    const decoder = new TextDecoder();
    // The tail of the previous read, so a mark split across reads is still found once.
    let carry = '';
    return body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(bytes, controller) {
          const now = performance.now();
          const text = carry + decoder.decode(bytes, { stream: true });
          let from = 0;
          for (;;) {
            const at = text.indexOf(MARK, from);
            if (at === -1) break;
            arrivals.push(now);
            from = at + MARK.length;
          }
          carry = text.slice(Math.max(from, text.length - (MARK.length - 1)));
          controller.enqueue(bytes);
        },
      }),
    );
  };
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const response = await inner(input, init);
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (response.body === null || !/\/out(\?|$)/.test(url)) return response;
    return new Response(watch(response.body), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
  return { fetch, arrivals };
}
