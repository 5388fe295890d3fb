import type { HttpBindings } from '@hono/node-server';
import type { Context } from 'hono';
import { HEADER } from '../../protocol/headers.js';
import { MAX_APPEND_BODY_BYTES, MAX_STORED_RECORD_BYTES } from '../../protocol/limits.js';
import type { ChatInputChunk } from '../../protocol/types.js';
import { measureAppend, validateInputChunk, validatePartId } from '../../protocol/validate.js';
import type { DevHono } from '../app.js';
import type { DevServerContext } from '../context.js';
import { randomId } from '../ids.js';
import { startRun } from '../runs/run.js';
import { authorizeSession } from './authorize.js';
import { appendError, badRequestFrom, parseJson } from './responses.js';

type AppContext = Context<{ Bindings: Partial<HttpBindings> }>;

/** Drops the connection without answering (the node socket; in-process there is none). */
function loseResponse(c: AppContext): Response {
  const socket = c.env?.incoming?.socket;
  if (socket !== undefined) {
    socket.destroy();
    return new Response(null, { headers: { 'x-hono-already-sent': 'true' } });
  }
  // No socket to cut (fetch handler used in-process): an unreadable body is the closest.
  return new Response(
    new ReadableStream({
      start(controller) {
        controller.error(new TypeError('connection lost (injected fault)'));
      },
    }),
  );
}

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
    if (fault?.kind === 'status') {
      if (fault.status === 429) {
        c.header(HEADER.rateLimitLimit, String(fault.limit));
        c.header(HEADER.rateLimitRemaining, '0');
        c.header(HEADER.rateLimitReset, String(Date.now() + fault.resetInMs));
        return appendError(c, 429, 'rate limited (injected fault)');
      }
      return appendError(c, 500, 'transient failure on the durable stream (injected fault)');
    }
    const text = await c.req.text();
    const size = measureAppend(text);
    if (size.bodyBytes > MAX_APPEND_BODY_BYTES) {
      return appendError(c, 413, `body is ${size.bodyBytes} bytes; the limit is ${MAX_APPEND_BODY_BYTES}`);
    }
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
    const repeated = partIdHeader === undefined ? undefined : session.in.seqOfPart(partIdHeader);
    if (repeated !== undefined) return c.json({ ok: true, seq: repeated });
    const record = session.in.append(chunk, partIdHeader ?? `srv_${randomId(16)}`);
    if (session.run === null) {
      const previousRunId = session.lastRunId ?? undefined;
      startRun(context, session, { continuation: true, previousRunId, firstPayload: undefined });
    }
    if (fault?.kind === 'lose-response') return loseResponse(c);
    return c.json({ ok: true, seq: record.seq });
  });
}
