import type { SessionEvent } from '../client/events.js';
import type { InspectionNote, TappedRequest } from '../client/inspection.js';
import {
  exchangeKindOf,
  RECORDING_FORMAT,
  RECORDING_VERSION,
  type RecordedEntry,
  type RecordedEvent,
  type RecordedExchange,
  type RecordedStart,
  type SessionRecording,
} from '../protocol/recording.js';
import { TokenRedactor } from './token-redactor.js';

/** How much one chat's recording keeps; past it, the oldest entries go (`truncated`). */
export interface RecordingLimits {
  /** Requests kept. Default 1,000. */
  maxExchanges?: number;
  /** Characters of response bodies kept, all requests together. Default 4 Mi. */
  maxBodyChars?: number;
  /** Events, and notes, kept. Default 5,000 each. */
  maxEntries?: number;
}

/** The request headers of the protocol worth replaying; anything else an app adds is left out. */
const REQUEST_HEADERS = [
  'authorization',
  'last-event-id',
  'x-part-id',
  'timeout-seconds',
  'x-peek-settled',
  'content-type',
  'accept',
];

interface LiveExchange extends RecordedExchange {
  bodyChars: number;
  /** Dropped from the recording (bounds): what it still reads is no longer kept. */
  dropped?: boolean;
}

/** A step of one request, for a live view (the devtools timeline). */
export type ExchangeStep = 'sent' | 'answered' | 'ended' | 'failed';

/** Told each step of every request as it is recorded; must not throw. */
export type ExchangeObserver = (exchange: RecordedExchange, step: ExchangeStep) => void;

function errorMessage(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** An event as plain data: an error keeps its name, code, message, status and retryability. */
function eventAsData(event: SessionEvent): RecordedEvent {
  const { chatId: _chatId, ...rest } = event;
  if (event.type !== 'error') return rest as RecordedEvent;
  const { error } = event;
  return {
    type: 'error',
    fatal: event.fatal,
    error: {
      name: error.name,
      code: error.code,
      message: error.message,
      retryable: error.retryable,
      status: error.status,
    },
  };
}

/**
 * Records one chat: its wire (through the inspection tap's `fetch`), its events and notes,
 * bounded. Tokens are replaced as they are recorded, but for response bodies: those are
 * redacted whole when exported, since a token may arrive split across two reads.
 */
export class ChatRecorder {
  readonly startedAt = Date.now();
  private readonly redactor = new TokenRedactor();
  private readonly exchanges: LiveExchange[] = [];
  private readonly events: RecordedEntry<RecordedEvent>[] = [];
  private readonly notes: RecordedEntry<Record<string, unknown> & { type: string }>[] = [];
  private readonly starts: RecordedStart[] = [];
  private bodyChars = 0;
  private truncated = false;
  private readonly maxExchanges: number;
  private readonly maxBodyChars: number;
  private readonly maxEntries: number;

  constructor(
    readonly chatId: string,
    limits: RecordingLimits = {},
    private readonly observer?: ExchangeObserver,
  ) {
    this.maxExchanges = limits.maxExchanges ?? 1_000;
    this.maxBodyChars = limits.maxBodyChars ?? 4 * 1024 * 1024;
    this.maxEntries = limits.maxEntries ?? 5_000;
  }

  private sinceStart(): number {
    return Date.now() - this.startedAt;
  }

  event(event: SessionEvent): void {
    this.keep(this.events, { at: this.sinceStart(), value: eventAsData(event) });
  }

  note(note: InspectionNote): void {
    const at = this.sinceStart();
    if (note.type === 'session-started') {
      // The token's facts arrive without the token: it gets a placeholder of its own.
      const tokenId = note.token === undefined ? undefined : this.redactor.tokens.length + 1;
      if (note.token !== undefined) {
        this.redactor.tokens.push({
          id: tokenId as number,
          expiresInMs: note.token.expiresAt === undefined ? undefined : note.token.expiresAt - Date.now(),
          scopes: note.token.scopes,
        });
      }
      const { sessionId, isCached, currentRunId } = note;
      this.starts.push({ at, sessionId, isCached, currentRunId, tokenId });
    }
    this.keep(this.notes, { at, value: { ...note } });
  }

  /** Sends one request, recording it and its answer as the client reads it. */
  async exchange(request: TappedRequest, send: () => Promise<Response>): Promise<Response> {
    let exchange: LiveExchange;
    try {
      exchange = this.begin(request);
    } catch (error) {
      // Recording must never break the request it watches: this one goes unrecorded.
      console.warn(`[durable-chat devtools] could not record a request: ${String(error)}`);
      return send();
    }
    return this.follow(request, exchange, send);
  }

  private begin(request: TappedRequest): LiveExchange {
    const seenAt = Date.now();
    const { init } = request;
    const method = (init.method ?? 'GET').toUpperCase();
    // A relative base URL (a same-origin proxy) is fine: only the path is kept.
    const path = new URL(request.url, 'http://relative.invalid').pathname;
    const headers: Record<string, string> = {};
    const sent = new Headers(init.headers);
    for (const name of REQUEST_HEADERS) {
      const value = sent.get(name);
      if (value !== null) headers[name] = this.redactor.redact(value, seenAt);
    }
    const exchange: LiveExchange = {
      kind: exchangeKindOf(method, path),
      at: seenAt - this.startedAt,
      request: { method, path, headers },
      bodyChars: 0,
    };
    if (typeof init.body === 'string') exchange.request.body = this.redactor.redact(init.body, seenAt);
    this.exchanges.push(exchange);
    if (this.exchanges.length > this.maxExchanges) this.drop(0);
    this.notify(exchange, 'sent');
    return exchange;
  }

  private async follow(request: TappedRequest, exchange: LiveExchange, send: () => Promise<Response>) {
    const { init } = request;
    let response: Response;
    try {
      response = await send();
    } catch (error) {
      exchange.failure = {
        at: this.sinceStart(),
        message: errorMessage(error),
        aborted: init.signal?.aborted === true,
      };
      this.notify(exchange, 'failed');
      throw error;
    }
    const answered = Date.now();
    const responseHeaders: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      if (name !== 'set-cookie') responseHeaders[name] = this.redactor.redact(value, answered);
    });
    const recorded: NonNullable<RecordedExchange['response']> = {
      at: answered - this.startedAt,
      status: response.status,
      headers: responseHeaders,
      frames: [],
      end: { type: 'open', at: answered - this.startedAt },
    };
    exchange.response = recorded;
    this.notify(exchange, 'answered');
    if (response.body === null) {
      recorded.end = { type: 'complete', at: recorded.at };
      this.notify(exchange, 'ended');
      return response;
    }
    return new Response(this.observe(response.body, exchange, recorded, init.signal ?? undefined), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  }

  private observe(
    source: ReadableStream<Uint8Array>,
    exchange: LiveExchange,
    recorded: NonNullable<RecordedExchange['response']>,
    signal: AbortSignal | undefined,
  ): ReadableStream<Uint8Array> {
    const reader = source.getReader();
    const decoder = new TextDecoder();
    const ended = (type: 'complete' | 'dropped' | 'aborted') => {
      if (recorded.end.type !== 'open') return;
      recorded.end = { type, at: this.sinceStart() };
      this.notify(exchange, 'ended');
    };
    const frame = (text: string) => {
      if (text === '' || exchange.dropped === true) return;
      recorded.frames.push({ at: this.sinceStart(), text });
      exchange.bodyChars += text.length;
      this.bodyChars += text.length;
      if (this.bodyChars > this.maxBodyChars) this.shrink();
    };
    // No read-ahead (highWaterMark 0): the client reads at its own pace, as without the tap.
    return new ReadableStream<Uint8Array>(
      {
        pull: async (controller) => {
          try {
            const { done, value } = await reader.read();
            if (done) {
              frame(decoder.decode());
              ended('complete');
              controller.close();
              return;
            }
            frame(decoder.decode(value, { stream: true }));
            controller.enqueue(value);
          } catch (error) {
            ended(signal?.aborted === true ? 'aborted' : 'dropped');
            controller.error(error);
          }
        },
        cancel: (reason) => {
          ended('aborted');
          return reader.cancel(reason);
        },
      },
      { highWaterMark: 0 },
    );
  }

  /**
   * Back within `maxBodyChars`: finished requests go first, oldest first; then the oldest
   * pieces of the request holding the most (a long reply still streaming). A single piece
   * is never cut, so a request may exceed the bound by its newest piece.
   */
  private shrink(): void {
    const finished = (exchange: LiveExchange) =>
      exchange.response === undefined || exchange.response.end.type !== 'open';
    for (let index = 0; this.bodyChars > this.maxBodyChars && index < this.exchanges.length; ) {
      const exchange = this.exchanges[index] as LiveExchange;
      if (finished(exchange) && exchange.bodyChars > 0) this.drop(index);
      else index++;
    }
    while (this.bodyChars > this.maxBodyChars) {
      let largest: LiveExchange | undefined;
      for (const exchange of this.exchanges) {
        if ((exchange.response?.frames.length ?? 0) > 1 && exchange.bodyChars > (largest?.bodyChars ?? 0))
          largest = exchange;
      }
      const response = largest?.response;
      if (largest === undefined || response === undefined) return;
      const dropped = response.frames.shift() as { text: string };
      largest.bodyChars -= dropped.text.length;
      this.bodyChars -= dropped.text.length;
      response.truncated = true;
      this.truncated = true;
    }
  }

  private drop(index: number): void {
    const [exchange] = this.exchanges.splice(index, 1);
    if (exchange === undefined) return;
    this.bodyChars -= exchange.bodyChars;
    exchange.dropped = true;
    this.truncated = true;
  }

  private notify(exchange: RecordedExchange, step: ExchangeStep): void {
    try {
      this.observer?.(exchange, step);
    } catch (error) {
      console.warn(`[durable-chat devtools] a timeline observer threw: ${String(error)}`);
    }
  }

  private keep<T>(list: T[], entry: T): void {
    list.push(entry);
    if (list.length > this.maxEntries) {
      list.shift();
      this.truncated = true;
    }
  }

  /** The recording so far, redacted. Requests still open are marked `open`. */
  export(): SessionRecording {
    const now = Date.now();
    const exchanges = this.exchanges.map(
      ({ bodyChars: _bodyChars, dropped: _dropped, response, ...rest }): RecordedExchange => {
        // The response's pieces are built anew (redacted), so only the rest is cloned.
        const exchange: RecordedExchange = structuredClone(rest);
        if (response === undefined) return exchange;
        const texts = this.redactor.redactPieces(
          response.frames.map((frame) => frame.text),
          now,
        );
        exchange.response = {
          at: response.at,
          status: response.status,
          headers: { ...response.headers },
          frames: response.frames.map((frame, index) => ({ at: frame.at, text: texts[index] ?? '' })),
          end:
            response.end.type === 'open' ? { type: 'open', at: now - this.startedAt } : { ...response.end },
          ...(response.truncated === true ? { truncated: true } : {}),
        };
        return exchange;
      },
    );
    return {
      format: RECORDING_FORMAT,
      version: RECORDING_VERSION,
      chatId: this.chatId,
      startedAt: this.startedAt,
      truncated: this.truncated,
      tokens: structuredClone(this.redactor.tokens),
      starts: structuredClone(this.starts),
      exchanges,
      events: structuredClone(this.events),
      notes: structuredClone(this.notes),
    };
  }
}
