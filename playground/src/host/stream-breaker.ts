import type { ServerResponse } from 'node:http';

/**
 * Tracks the `.out` responses open on the playground host, so the "drop connection"
 * button can cut them mid-reply the way a flaky network would: the socket is destroyed,
 * and the browser sees its stream fail, never a clean end.
 */
export class StreamBreaker {
  private readonly open = new Set<ServerResponse>();

  /** Tracks `response` until it closes. */
  track(response: ServerResponse): void {
    if (response.closed) return;
    this.open.add(response);
    response.once('close', () => this.open.delete(response));
  }

  /** Cuts every tracked connection; returns how many there were. */
  drop(): number {
    const responses = [...this.open];
    this.open.clear();
    for (const response of responses) {
      response.socket?.destroy();
      response.destroy();
    }
    return responses.length;
  }

  get size(): number {
    return this.open.size;
  }
}
