import type { UIMessageChunk } from 'ai';
import { type ChatInputChunk, httpErrorFromResponse, type OutBatch, ProtocolError } from 'durable-chat';
import { createParser } from 'eventsource-parser';
import type { ClientVariant, TurnContext } from './client-variant.js';

async function failure(response: Response, operation: string): Promise<Error> {
  const body: unknown = await response.json().catch(() => undefined);
  return httpErrorFromResponse({ status: response.status, operation, body, headers: response.headers });
}

function sessionUrl({ baseUrl, chatId }: TurnContext): string {
  return `${baseUrl}/realtime/v1/sessions/${encodeURIComponent(chatId)}`;
}

export async function floorAppend(context: TurnContext): Promise<void> {
  const { chatId, token, message } = context;
  const body: ChatInputChunk = { kind: 'message', payload: { chatId, trigger: 'submit-message', message } };
  const append = await fetch(`${sessionUrl(context)}/in/append`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!append.ok) throw await failure(append, 'append to .in');
  await append.json();
}

/** How one `.out` read ended: at the turn's turn-complete, or cut short after `cursor`. */
export interface FloorReadEnd {
  ended: boolean;
  cursor: number;
}

/**
 * The floor: what any reader of this protocol must do at least. One `.out` read,
 * eventsource-parser, `JSON.parse` of each batch and each record body, the cursor kept;
 * no retries, no validation, no streams between the parser and the caller.
 */
export async function floorRead(
  context: TurnContext,
  onChunk: (chunk: UIMessageChunk) => void,
  cursor = -1,
  signal?: AbortSignal,
): Promise<FloorReadEnd> {
  const abort = new AbortController();
  signal?.addEventListener('abort', () => abort.abort(signal.reason), { once: true });
  const headers: Record<string, string> = {
    authorization: `Bearer ${context.token}`,
    accept: 'text/event-stream',
  };
  if (cursor >= 0) headers['last-event-id'] = String(cursor);
  const response = await fetch(`${sessionUrl(context)}/out`, { headers, signal: abort.signal });
  if (!response.ok || response.body === null) throw await failure(response, 'read .out');
  const end: FloorReadEnd = { ended: false, cursor };
  const parser = createParser({
    onEvent(event) {
      if (event.event !== 'batch' || end.ended) return;
      const batch = JSON.parse(event.data) as OutBatch;
      for (const record of batch.records) {
        end.cursor = record.seq_num;
        const recordHeaders = record.headers;
        if (recordHeaders !== undefined && recordHeaders.length > 0) {
          // Control or command record; the floor only needs to know where the turn ends.
          if (
            recordHeaders.some(([name, value]) => name === 'trigger-control' && value === 'turn-complete')
          ) {
            end.ended = true;
            return;
          }
          continue;
        }
        onChunk((JSON.parse(record.body) as { data: UIMessageChunk }).data);
      }
    },
  });
  const text = new TextDecoder();
  const reader = response.body.getReader();
  try {
    while (!end.ended) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(text.decode(value, { stream: true }));
    }
  } catch (error) {
    // A dropped connection; the caller decides whether to read again from the cursor.
    if (!(error instanceof TypeError)) throw error;
  } finally {
    abort.abort();
  }
  return end;
}

/** Append, then read to the turn's end in one connection. */
export async function floorTurn(
  context: TurnContext,
  onChunk: (chunk: UIMessageChunk) => void,
): Promise<void> {
  await floorAppend(context);
  const end = await floorRead(context, onChunk);
  if (!end.ended) {
    throw new ProtocolError({ code: 'UNEXPECTED_RESPONSE', message: '.out ended before turn-complete' });
  }
}

/**
 * The floor of a resume: re-read at once from the cursor after every drop, no backoff.
 * Reads from `options.cursor` (a follow-up turn: the previous turn's end; default: the
 * start) and resolves to the cursor of the turn-complete it ended at.
 * `overlapAppend` opens the read while the append is in flight instead of after it, as a
 * transport must if a slow or retried append is not to hold back a reply already streaming:
 * two requests in flight per chat at the start instead of one after the other.
 */
export async function floorResumingTurn(
  context: TurnContext,
  onChunk: (chunk: UIMessageChunk) => void,
  options: { maxReads?: number; overlapAppend?: boolean; cursor?: number } = {},
): Promise<number> {
  const maxReads = options.maxReads ?? 5;
  const appended = floorAppend(context);
  const readAbort = options.overlapAppend ? new AbortController() : undefined;
  // A failed append ends the overlapped read (no reply will come); its error is thrown below.
  if (readAbort !== undefined) appended.catch((error: unknown) => readAbort.abort(error));
  else await appended;
  let cursor = options.cursor ?? -1;
  for (let read = 0; read < maxReads && readAbort?.signal.aborted !== true; read++) {
    const end = await floorRead(context, onChunk, cursor, readAbort?.signal);
    if (end.ended) {
      await appended;
      return end.cursor;
    }
    cursor = end.cursor;
  }
  await appended;
  throw new ProtocolError({
    code: 'UNEXPECTED_RESPONSE',
    message: `no turn-complete after ${maxReads} reads`,
  });
}

/**
 * `followUps`: keep each chat's cursor (the end of its last turn) and read its next turn from
 * there, as any reader of a multi-turn chat must; off, every send reads from the start (the
 * single-turn scenarios, whose memory figures then hold no per-chat map).
 */
export function createFloorVariant(
  options: { overlapAppend?: boolean; followUps?: boolean } = {},
): ClientVariant {
  const cursors = options.followUps === true ? new Map<string, number>() : undefined;
  return {
    name: options.overlapAppend ? 'floor-overlap' : 'floor',
    async send(context) {
      // For the reducer and first-chunk comparisons: the floor's chunks as a stream.
      return new ReadableStream<UIMessageChunk>({
        start(controller) {
          const cursor = cursors?.get(context.chatId);
          floorResumingTurn(context, (chunk) => controller.enqueue(chunk), {
            overlapAppend: options.overlapAppend,
            cursor,
          }).then(
            (end) => {
              cursors?.set(context.chatId, end);
              controller.close();
            },
            (error: unknown) => controller.error(error),
          );
        },
      });
    },
  };
}
