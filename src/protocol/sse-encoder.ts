import type { OutBatch, OutPing } from './types.js';

/**
 * Frames for the `.out` SSE stream. The decoder reads back exactly what these write
 * (`decode(encode(x))` equals `x`). JSON never contains a raw newline, so every `data:`
 * fits on one line.
 */
export function encodeBatchEvent(batch: OutBatch, id?: string): string {
  const idLine = id === undefined ? '' : `id: ${id}\n`;
  return `event: batch\n${idLine}data: ${JSON.stringify(batch)}\n\n`;
}

export function encodePingEvent(ping: OutPing): string {
  return `event: ping\ndata: ${JSON.stringify(ping)}\n\n`;
}

export function encodeDoneEvent(): string {
  return 'data: [DONE]\n\n';
}

/** A plain-text reason; each line of it becomes one `data:` line. */
export function encodeErrorEvent(message: string): string {
  const lines = message.split(/\r\n|\r|\n/);
  return `event: error\n${lines.map((line) => `data: ${line}\n`).join('')}\n`;
}

/** The store-owned `id:` line: a comma-separated triple that clients must ignore. */
export function batchEventId(lastSeqNum: number, timestamp: number, count: number): string {
  return `${lastSeqNum},${timestamp},${count}`;
}
