import type { Context } from 'hono';
import { COMMAND_TRIM, EVENT_STREAM, HEADER, STREAM_VERSION_V2 } from '../../protocol/headers.js';
import { DEFAULT_TIMEOUT_SECONDS } from '../../protocol/limits.js';
import { classifyRecord, isTurnComplete } from '../../protocol/records.js';
import type { OutRecord } from '../../protocol/types.js';
import { validateTimeoutSeconds } from '../../protocol/validate.js';
import type { DevHono } from '../app.js';
import type { DevServerContext } from '../context.js';
import type { Session } from '../store/session.js';
import { authorizeSession } from './authorize.js';
import { hangUntilGone } from './hold-request.js';
import { OutConnection } from './out-connection.js';
import {
  badRequestFrom,
  CORS_HEADERS,
  dropConnection,
  type ErrorStatus,
  errorResponse,
} from './responses.js';
import { nodeSink, type SseSink, streamSink } from './sse-sink.js';

function isTrimCommand(record: OutRecord): boolean {
  const classified = classifyRecord(record);
  return classified.kind === 'command' && classified.operation === COMMAND_TRIM;
}

/** Peek: the latest data/control record (a trailing trim skipped) is a turn-complete. */
function isSettled(session: Session): boolean {
  const last = session.out.last(isTrimCommand);
  return last !== undefined && isTurnComplete(classifyRecord(last));
}

/** `Last-Event-ID` + 1; anything but a single non-negative integer restarts from 0, as the spec says. */
function startSeq(lastEventId: string | undefined): number {
  const value = lastEventId?.trim();
  if (value === undefined || !/^\d+$/.test(value)) return 0;
  const parsed = Number(value);
  return Number.isSafeInteger(parsed) ? parsed + 1 : 0;
}

const REFUSAL_STATUSES: readonly ErrorStatus[] = [401, 403, 404, 409, 429, 500, 502, 503, 504];

/** A `.out` request refused by a fault; 409 as for a closed session, with its machine code. */
function refusal(c: Context, requested: number, session: Session, retryAfterSeconds?: number): Response {
  if (retryAfterSeconds !== undefined) c.header('retry-after', String(retryAfterSeconds));
  const status = REFUSAL_STATUSES.find((candidate) => candidate === requested) ?? 500;
  if (status === 409) {
    return errorResponse(c, 409, 'the session is closed (injected fault)', {
      code: 'session_closed',
      closedReason: session.row.closedReason,
    });
  }
  return errorResponse(c, status, `refused with ${status} (injected fault)`);
}

export function mountOutRoute(app: DevHono, context: DevServerContext): void {
  app.get('/realtime/v1/sessions/:id/out', async (c) => {
    const authorized = await authorizeSession(
      context,
      c,
      'read',
      (ctx, status, error) => errorResponse(ctx, status, error),
      true,
    );
    if (!authorized.ok) return authorized.response;
    if (!(c.req.header(HEADER.accept) ?? '').includes(EVENT_STREAM)) {
      return errorResponse(c, 406, `non-SSE caller: send "Accept: ${EVENT_STREAM}"`, {
        code: 'NOT_ACCEPTABLE',
      });
    }
    let timeoutSeconds = DEFAULT_TIMEOUT_SECONDS;
    const timeoutHeader = c.req.header(HEADER.timeoutSeconds);
    if (timeoutHeader !== undefined) {
      try {
        const value = /^\d+$/.test(timeoutHeader.trim()) ? Number(timeoutHeader) : Number.NaN;
        validateTimeoutSeconds(value);
        timeoutSeconds = value;
      } catch (error) {
        return errorResponse(c, 400, badRequestFrom(error).error, { code: 'BAD_REQUEST' });
      }
    }
    const session = authorized.session;
    if (session.streams.size >= context.options.maxStreamsPerSession) {
      // One token must not pin an unbounded number of sockets and timers on the server.
      c.header('retry-after', '1');
      return errorResponse(
        c,
        429,
        `too many open .out streams for this session (${context.options.maxStreamsPerSession}); close one first`,
        { code: 'TOO_MANY_STREAMS' },
      );
    }
    const plan = context.faults.takeOutPlan();
    if (plan.hang === true) {
      await hangUntilGone(context, c.req.raw.signal);
      return dropConnection(c);
    }
    if (plan.status !== undefined) return refusal(c, plan.status, session, plan.retryAfterSeconds);
    const settled = c.req.header(HEADER.peekSettled) === '1' && isSettled(session);
    const headers: Record<string, string> = {
      ...CORS_HEADERS,
      'content-type': `${EVENT_STREAM}; charset=utf-8`,
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
      [HEADER.streamVersion]: STREAM_VERSION_V2,
    };
    if (settled) headers[HEADER.sessionSettled] = 'true';
    const outgoing = c.env?.outgoing;
    let sink: SseSink;
    let response: Response;
    if (outgoing !== undefined) {
      sink = nodeSink(outgoing, 200, headers);
      response = new Response(null, { headers: { 'x-hono-already-sent': 'true' } });
    } else {
      const stream = streamSink();
      sink = stream.sink;
      response = new Response(stream.body, { status: 200, headers });
    }
    const connection = new OutConnection(session, sink, {
      from: startSeq(c.req.header(HEADER.lastEventId)),
      timeoutMs: timeoutSeconds * 1000,
      pingIntervalMs: context.options.pingIntervalMs,
      settled,
      peekCloseMs: context.options.peekCloseMs,
      maxBatchRecords: context.options.maxBatchRecords,
      plan,
      pieceBytes: () => context.faults.sseChunkBytes,
      onError: (error) => context.logger.warn(`session ${session.row.id}: a .out write failed`, error),
      registry: context.streams,
      // A watch token must not read its way to a token that can append.
      withoutTokens: authorized.outOnly,
    });
    connection.start();
    return response;
  });
}
