import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppendResponse, CreateSessionResponse } from 'durable-chat';

const TOKEN_LIFETIME_SECONDS = 3600;

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  const text = Buffer.concat(parts).toString('utf8');
  return text === '' ? undefined : JSON.parse(text);
}

function base64Url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/**
 * A JWT-shaped session token. Clients read `exp` and `scopes` but never verify the
 * signature (they have no key), so an unsigned token is all the fixture needs.
 */
export function fakeSessionToken(chatId: string): string {
  const exp = Math.floor(Date.now() / 1000) + TOKEN_LIFETIME_SECONDS;
  const scopes = [`read:sessions:${chatId}`, `write:sessions:${chatId}`, `read:runs:run_${chatId}`];
  return `${base64Url({ alg: 'none', typ: 'JWT' })}.${base64Url({ sub: chatId, exp, scopes })}.bench`;
}

/** `POST /api/v1/sessions`: every chat id is accepted; the turn is chosen by the id's prefix. */
export async function handleCreate(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = (await readJson(req)) as { externalId?: unknown; taskIdentifier?: unknown } | undefined;
  const chatId = typeof body?.externalId === 'string' ? body.externalId : undefined;
  if (chatId === undefined) return sendJson(res, 400, { ok: false, error: 'externalId is required' });
  const now = new Date().toISOString();
  const row: CreateSessionResponse = {
    id: `session_${chatId}`,
    externalId: chatId,
    type: 'chat.agent',
    taskIdentifier: typeof body?.taskIdentifier === 'string' ? body.taskIdentifier : 'bench',
    triggerConfig: { basePayload: { chatId, trigger: 'preload' } },
    currentRunId: `run_${chatId}`,
    tags: [],
    metadata: null,
    closedAt: null,
    closedReason: null,
    expiresAt: null,
    createdAt: now,
    updatedAt: now,
    runId: `run_${chatId}`,
    publicAccessToken: fakeSessionToken(chatId),
    isCached: false,
  };
  sendJson(res, 201, row);
}

/** `POST .../in/append`: answers `{ok: true, seq}`; returns whether the append was accepted. */
export async function handleAppend(req: IncomingMessage, res: ServerResponse, seq: number): Promise<boolean> {
  let body: unknown;
  try {
    body = await readJson(req);
  } catch {
    sendJson(res, 400, { ok: false, error: 'body is not JSON' });
    return false;
  }
  const kind = (body as { kind?: unknown } | undefined)?.kind;
  if (kind !== 'message' && kind !== 'stop') {
    sendJson(res, 400, { ok: false, error: 'body is not a ChatInputChunk' });
    return false;
  }
  const answer: AppendResponse = { ok: true, seq };
  sendJson(res, 200, answer);
  // A stop is acknowledged but starts no turn.
  return kind === 'message';
}
