import type { ExchangeKind, RecordedExchange } from '../../protocol/recording.js';

/** What of an incoming request says which recorded exchange it is. */
export interface IncomingRequest {
  method: string;
  path: string;
  kind: ExchangeKind;
  /** `Last-Event-ID` as sent (undefined: none). */
  lastEventId: string | undefined;
  /** `X-Part-Id` as sent (undefined: none). */
  partId: string | undefined;
}

/**
 * Finds the recorded exchange an incoming request stands for, by what identifies it on the
 * wire rather than by its place in line: under load a client's reads, reconnects and retries
 * arrive in another order than they were recorded (a read may go out before an append, a
 * refused read may be retried after the next append), and the n-th request of a kind is then
 * not the n-th recorded one.
 *
 * - `.out` read: the same path and the same `Last-Event-ID` (the records it starts after);
 *   several recorded reads from one cursor (a 401 then its retry, a drop before any record)
 *   are served in their recorded order.
 * - append: the same path, by `X-Part-Id`. Ids are random per run, so the first append under
 *   a new id takes the first recorded append whose id no earlier one took, and a retry under
 *   that id takes the next recorded attempt under the recorded id.
 * - anything else: the same method and path, in recorded order.
 *
 * Each recorded exchange is served once: a request with nothing left to match is beyond the
 * recording.
 */
export class ExchangeMatcher {
  private readonly served = new Set<RecordedExchange>();
  /** This run's part id → the recorded one it stands for. */
  private readonly partIds = new Map<string, string | undefined>();
  private readonly claimedPartIds = new Set<string>();

  constructor(private readonly exchanges: readonly RecordedExchange[]) {}

  match(request: IncomingRequest): RecordedExchange | undefined {
    const found = this.exchanges.find(
      (exchange) => !this.served.has(exchange) && this.fits(exchange, request),
    );
    if (found === undefined) return undefined;
    this.served.add(found);
    if (found.kind === 'append' && request.partId !== undefined && !this.partIds.has(request.partId)) {
      const recorded = found.request.headers['x-part-id'];
      this.partIds.set(request.partId, recorded);
      if (recorded !== undefined) this.claimedPartIds.add(recorded);
    }
    return found;
  }

  private fits(exchange: RecordedExchange, request: IncomingRequest): boolean {
    if (
      exchange.kind !== request.kind ||
      exchange.request.method !== request.method ||
      exchange.request.path !== request.path
    )
      return false;
    switch (request.kind) {
      case 'out':
        return exchange.request.headers['last-event-id'] === request.lastEventId;
      case 'append': {
        const recorded = exchange.request.headers['x-part-id'];
        if (request.partId === undefined || recorded === undefined) return true;
        if (this.partIds.has(request.partId)) return this.partIds.get(request.partId) === recorded;
        return !this.claimedPartIds.has(recorded);
      }
      case 'other':
        return true;
    }
  }
}
