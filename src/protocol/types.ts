import type { UIMessage, UIMessageChunk } from 'ai';

/** Triggers of the wire payload. Only `preload` and `submit-message` may start a session. */
export type ChatTrigger =
  | 'submit-message'
  | 'regenerate-message'
  | 'preload'
  | 'close'
  | 'action'
  | 'handover-prepare';

/** `ChatTaskWirePayload`: what the agent receives, in `basePayload` or a `.in` message chunk. */
export interface ChatTaskWirePayload<M extends UIMessage = UIMessage> {
  chatId: string;
  trigger: ChatTrigger;
  /** At most one message per record. */
  message?: M;
  /** Only honoured with `handover-prepare`. */
  headStartMessages?: M[];
  messageId?: string;
  metadata?: unknown;
  action?: unknown;
  /** Set by the server on continuation runs. */
  continuation?: boolean;
  previousRunId?: string;
  idleTimeoutInSeconds?: number;
  sessionId?: string;
}

/** Body of `POST .../in/append`: raw JSON of one chunk. */
export type ChatInputChunk<M extends UIMessage = UIMessage> =
  | { kind: 'message'; payload: ChatTaskWirePayload<M> }
  | { kind: 'stop'; message?: string };

export interface TriggerConfig<M extends UIMessage = UIMessage> {
  basePayload: ChatTaskWirePayload<M>;
  machine?: string;
  queue?: string;
  tags?: string[];
  maxAttempts?: number;
  maxDuration?: number;
  lockToVersion?: string;
  region?: string;
  idleTimeoutInSeconds?: number;
}

/** `POST /api/v1/sessions` body. */
export interface CreateSessionRequest<M extends UIMessage = UIMessage> {
  type: 'chat.agent';
  taskIdentifier: string;
  triggerConfig: TriggerConfig<M>;
  externalId?: string;
  tags?: string[];
  metadata?: Record<string, unknown>;
  expiresAt?: string;
}

/** The session row. */
export interface SessionRow<M extends UIMessage = UIMessage> {
  id: string;
  externalId: string | null;
  type: 'chat.agent';
  taskIdentifier: string;
  triggerConfig: TriggerConfig<M>;
  currentRunId: string | null;
  tags: string[];
  metadata: Record<string, unknown> | null;
  closedAt: string | null;
  closedReason: string | null;
  expiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface CreateSessionResponse<M extends UIMessage = UIMessage> extends SessionRow<M> {
  runId: string;
  publicAccessToken: string;
  isCached: boolean;
}

/** `POST /api/v1/sessions/{id}/close` body. */
export interface CloseSessionRequest {
  reason?: string;
}

/** Success body of an append; `seq` is optional on input (wire notes). */
export interface AppendResponse {
  ok: true;
  seq?: number;
}

export interface AppendErrorBody {
  ok: false;
  error: string;
  code?: string;
  closedReason?: string | null;
}

/** One `[name, value]` header pair of a `.out` record. */
export type RecordHeader = [name: string, value: string];

/** A record on `.out`, as the wire carries it. */
export interface OutRecord {
  seq_num: number;
  timestamp: number;
  body: string;
  headers?: RecordHeader[];
}

/** Latest known tail of `.out`. */
export interface StreamTail {
  seq_num: number;
  timestamp: number;
}

/** Data of a `batch` SSE event. */
export interface OutBatch {
  records: OutRecord[];
  tail?: StreamTail;
}

/** Data of a `ping` SSE event. */
export interface OutPing {
  timestamp?: number;
  tail?: StreamTail;
}

/** The parsed body of a data record. */
export interface DataRecordBody<CHUNK = UIMessageChunk> {
  data: CHUNK;
  id: string;
}

/** Per-session snapshot in the object store. */
export interface SessionSnapshot<M extends UIMessage = UIMessage> {
  version: 1;
  messages: M[];
  lastOutEventId: number | null;
  lastOutTimestamp: number | null;
  savedAt: number;
}

/** Claims of a session token that a client may read (never verify). */
export interface TokenClaims {
  sub?: string;
  exp?: number;
  iat?: number;
  scopes?: string[];
}
