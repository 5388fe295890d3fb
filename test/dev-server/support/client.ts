import type { UIMessage, UIMessageChunk } from 'ai';
import {
  type ChatInputChunk,
  type ClassifiedRecord,
  classifyRecord,
  createOutStreamDecoder,
  type OutRecord,
  type OutStreamEvent,
} from '../../../src/protocol/index.js';

/** A tiny protocol client over real HTTP, for the dev server's own tests. */
export interface Target {
  url: string;
  secretKey: string;
}

export interface CreatedSession {
  status: number;
  headers: Headers;
  body: Record<string, unknown> & { id: string; runId: string; publicAccessToken: string; isCached: boolean };
}

export function userMessage(text: string, id = `u_${Math.random().toString(36).slice(2)}`): UIMessage {
  return { id, role: 'user', parts: [{ type: 'text', text }] };
}

export async function createSession(
  target: Target,
  options: {
    externalId?: string;
    taskIdentifier?: string;
    trigger?: 'preload' | 'submit-message';
    message?: UIMessage;
    metadata?: unknown;
    extra?: Record<string, unknown>;
    token?: string;
    triggerConfig?: Record<string, unknown>;
  } = {},
): Promise<CreatedSession> {
  const chatId = options.externalId ?? `chat_${Math.random().toString(36).slice(2)}`;
  const body = {
    type: 'chat.agent',
    taskIdentifier: options.taskIdentifier ?? 'echo',
    ...(options.externalId === undefined ? {} : { externalId: options.externalId }),
    triggerConfig: {
      ...options.triggerConfig,
      basePayload: {
        chatId,
        trigger: options.trigger ?? 'preload',
        ...(options.message === undefined ? {} : { message: options.message }),
        ...(options.metadata === undefined ? {} : { metadata: options.metadata }),
      },
    },
    ...options.extra,
  };
  const response = await fetch(`${target.url}/api/v1/sessions`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${options.token ?? target.secretKey}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as CreatedSession['body'],
  };
}

export function append(
  target: Target,
  session: string,
  token: string,
  chunk: ChatInputChunk | string,
  partId?: string,
): Promise<Response> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
  };
  if (partId !== undefined) headers['x-part-id'] = partId;
  return fetch(`${target.url}/realtime/v1/sessions/${encodeURIComponent(session)}/in/append`, {
    method: 'POST',
    headers,
    body: typeof chunk === 'string' ? chunk : JSON.stringify(chunk),
  });
}

export function sendText(
  target: Target,
  session: string,
  token: string,
  chatId: string,
  text: string,
  metadata?: unknown,
): Promise<Response> {
  return append(target, session, token, {
    kind: 'message',
    payload: { chatId, trigger: 'submit-message', message: userMessage(text), metadata },
  });
}

export interface OutRead {
  status: number;
  headers: Headers;
  events: OutStreamEvent[];
  records: OutRecord[];
  /** How the read ended: `[DONE]`, an `error` event, a dropped connection, or `until` satisfied. */
  ended: 'done' | 'error' | 'dropped' | 'until' | 'eof';
  raw: string;
}

/**
 * Reads `.out` until `until(records)` holds, `[DONE]`, an error event or a drop.
 * `lastEventId` and `headers` are sent as given.
 */
export async function readOut(
  target: Target,
  session: string,
  token: string,
  options: {
    lastEventId?: string;
    timeoutSeconds?: number;
    headers?: Record<string, string>;
    until?: (records: OutRecord[]) => boolean;
  } = {},
): Promise<OutRead> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'text/event-stream' };
  if (options.lastEventId !== undefined) headers['last-event-id'] = options.lastEventId;
  headers['timeout-seconds'] = String(options.timeoutSeconds ?? 5);
  const abort = new AbortController();
  const response = await fetch(`${target.url}/realtime/v1/sessions/${encodeURIComponent(session)}/out`, {
    headers: { ...headers, ...options.headers },
    signal: abort.signal,
  });
  const result: OutRead = {
    status: response.status,
    headers: response.headers,
    events: [],
    records: [],
    ended: 'eof',
    raw: '',
  };
  if (response.body === null || response.status !== 200) {
    result.raw = await response.text();
    return result;
  }
  let finished: OutRead['ended'] | undefined;
  const decoder = createOutStreamDecoder((event) => {
    result.events.push(event);
    if (event.type === 'batch') result.records.push(...event.records);
    if (event.type === 'done') finished = 'done';
    if (event.type === 'error') finished = 'error';
  });
  const reader = response.body.getReader();
  const text = new TextDecoder();
  try {
    while (finished === undefined) {
      const { done, value } = await reader.read();
      if (done) break;
      result.raw += text.decode(value, { stream: true });
      decoder.push(value);
      if (options.until?.(result.records) === true) finished = 'until';
    }
  } catch {
    finished = 'dropped';
  }
  abort.abort();
  result.ended = finished ?? 'eof';
  return result;
}

export function classify(records: OutRecord[]): ClassifiedRecord[] {
  return records.map((record) => classifyRecord(record));
}

/** Records up to and including the `count`-th turn-complete. */
export function untilTurnCompletes(count: number): (records: OutRecord[]) => boolean {
  return (records) =>
    classify(records).filter((record) => record.kind === 'control' && record.control === 'turn-complete')
      .length >= count;
}

/** Concatenated `text-delta`s of the data records. */
export function replyText(records: OutRecord[]): string {
  let text = '';
  for (const record of classify(records)) {
    if (record.kind === 'data' && record.chunk.type === 'text-delta') text += record.chunk.delta;
  }
  return text;
}

export function chunkTypes(records: OutRecord[]): string[] {
  return classify(records).map((record) => {
    if (record.kind === 'data') return record.chunk.type;
    if (record.kind === 'control') return `control:${record.control}`;
    if (record.kind === 'command') return `command:${record.operation}`;
    return 'malformed';
  });
}

export function turnCompletes(records: OutRecord[]) {
  return classify(records).filter(
    (record): record is Extract<ClassifiedRecord, { kind: 'control' }> =>
      record.kind === 'control' && record.control === 'turn-complete',
  );
}

/** Polls `check` every few ms until it returns a value (for state the HTTP API does not expose). */
export async function eventually<T>(check: () => T | undefined, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error('eventually: condition not met in time');
}

/** The UI message chunks carried by the data records. */
export function dataChunks(records: OutRecord[]): UIMessageChunk[] {
  return classify(records).flatMap((record) => (record.kind === 'data' ? [record.chunk] : []));
}

/** Answers a tool call by re-sending the assistant message `messageId` with one updated tool part. */
export function answerTool(
  target: Target,
  chatId: string,
  token: string,
  messageId: string,
  part: Record<string, unknown> & { type: string; toolCallId: string },
): Promise<Response> {
  return append(target, chatId, token, {
    kind: 'message',
    payload: {
      chatId,
      trigger: 'submit-message',
      message: { id: messageId, role: 'assistant', parts: [part] } as never,
    },
  });
}

/** Reads `.out` from just after `previous` until the next turn completes. */
export function readNextTurn(
  target: Target,
  chatId: string,
  token: string,
  previous: OutRecord[],
): Promise<OutRead> {
  return readOut(target, chatId, token, {
    lastEventId: String(previous.at(-1)?.seq_num),
    until: untilTurnCompletes(1),
  });
}

/** Creates a session for `externalId` and returns what the tests address it by. */
export async function openChat(target: Target, externalId: string, taskIdentifier?: string) {
  const created = await createSession(target, { externalId, taskIdentifier });
  return {
    id: created.body.id,
    token: created.body.publicAccessToken,
    runId: created.body.runId,
    chatId: externalId,
  };
}
