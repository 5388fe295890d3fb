import type { HttpBindings } from '@hono/node-server';
import type { Context } from 'hono';
import { HEADER } from '../../protocol/headers.js';
import { MAX_APPEND_BODY_BYTES, MAX_STORED_RECORD_BYTES } from '../../protocol/limits.js';
import type { ChatInputChunk } from '../../protocol/types.js';
import { measureAppend, validateInputChunk, validatePartId } from '../../protocol/validate.js';
import type { DevHono } from '../app.js';
import type { DevServerContext } from '../context.js';
import type { AppendFault } from '../faults.js';
import { randomId } from '../ids.js';
import { startRun } from '../runs/run.js';
import { authorizeSession } from './authorize.js';
import { hangUntilGone, holdUntilAnswered } from './hold-request.js';
import { readCappedBody } from './read-capped-body.js';
import { appendError, badRequestFrom, dropConnection, type ErrorStatus, parseJson } from './responses.js';

type AppContext = Context<{ Bindings: Partial<HttpBindings> }>;

export function mountAppendRoute(app: DevHono, context: DevServerContext): void {
  app.post('/realtime/v1/sessions/:id/in/append', async (c) => {
    const authorized = await authorizeSession(context, c, 'write', (ctx, status, error) =>
      appendError(ctx, status, error),
    );
    if (!authorized.ok) return authorized.response;
    const session = authorized.session;
    if (session.closed) {
      return appendError(c, 409, 'appending to a closed session is not allowed', {
        code: 'session_closed',
        closedReason: session.row.closedReason,
      });
    }
    const fault = context.faults.takeAppendFault();
    if (fault?.kind === 'status') return faultResponse(c, context, fault);
    if (fault?.kind === 'hang' && !fault.store) {
      await hangUntilGone(context, c.req.raw.signal);
      return dropConnection(c);
    }
    const text = await readCappedBody(c.req.raw, MAX_APPEND_BODY_BYTES);
    if (text === undefined) {
      return appendError(c, 413, `the body is over ${MAX_APPEND_BODY_BYTES} bytes, the limit`);
    }
    const size = measureAppend(text);
    if (size.storedBytes > MAX_STORED_RECORD_BYTES) {
      return appendError(
        c,
        413,
        `the stored record would be ${size.storedBytes} bytes; the ceiling is ${MAX_STORED_RECORD_BYTES}`,
      );
    }
    const partIdHeader = c.req.header(HEADER.partId);
    let chunk: ChatInputChunk;
    try {
      const parsed = parseJson(text);
      validateInputChunk(parsed);
      chunk = parsed;
      if (partIdHeader !== undefined) validatePartId(partIdHeader);
    } catch (error) {
      return appendError(c, 400, badRequestFrom(error).error, { code: 'BAD_REQUEST' });
    }
    const answer = (seq: number) => c.json(context.faults.wire.appendSeq ? { ok: true, seq } : { ok: true });
    const repeated = partIdHeader === undefined ? undefined : session.in.seqOfPart(partIdHeader);
    if (repeated !== undefined) {
      // The first copy may still be on its way to the disk: answered once it is there.
      const first = session.durable();
      if (first !== undefined) await first;
      return answer(repeated);
    }
    const record = session.in.append(chunk, partIdHeader ?? `srv_${randomId(16)}`);
    if (session.run === null) {
      const previousRunId = session.lastRunId ?? undefined;
      startRun(context, session, { continuation: true, previousRunId, firstPayload: undefined });
    }
    // Nothing is acknowledged (not even by a fault's answer) before it is durable.
    const kept = session.durable();
    if (kept !== undefined) await kept;
    switch (fault?.kind) {
      case 'lose-response':
        return dropConnection(c);
      case 'status-after-store':
        return faultResponse(c, context, fault);
      case 'hold':
        await holdUntilAnswered(context, session, record.seq, c.req.raw.signal);
        return answer(record.seq);
      case 'hang':
        await hangUntilGone(context, c.req.raw.signal);
        return dropConnection(c);
      default:
        return answer(record.seq);
    }
  });
}

/** `x-ratelimit-reset` as the fault asks: epoch ms (the production service), epoch or delta seconds. */
function rateLimitReset(fault: AppendFault, now: number): string {
  switch (fault.resetFormat) {
    case 'epoch-seconds':
      return String(Math.ceil((now + fault.resetInMs) / 1000));
    case 'delta-seconds':
      return String(Math.ceil(fault.resetInMs / 1000));
    default:
      return String(now + fault.resetInMs);
  }
}

function faultResponse(c: AppContext, context: DevServerContext, fault: AppendFault): Response {
  if (fault.status === 429) {
    c.header(HEADER.rateLimitLimit, String(fault.limit));
    c.header(HEADER.rateLimitRemaining, '0');
    c.header(HEADER.rateLimitReset, rateLimitReset(fault, context.options.clock()));
    return appendError(c, 429, 'rate limited (injected fault)');
  }
  // A refusal (4xx) is final for the client: `failAppends(1, 400)` must not read as a 500.
  if (fault.status >= 400 && fault.status < 500)
    return appendError(c, fault.status as ErrorStatus, 'the append is refused (injected fault)');
  if (fault.retryAfterSeconds !== undefined) c.header('retry-after', String(fault.retryAfterSeconds));
  const status: ErrorStatus =
    fault.status === 502 || fault.status === 503 || fault.status === 504 ? fault.status : 500;
  return appendError(c, status, 'transient failure on the durable stream (injected fault)');
}
