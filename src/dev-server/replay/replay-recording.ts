import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { HEADER } from '../../protocol/headers.js';
import {
  assertRecording,
  type ExchangeKind,
  exchangeKindOf,
  type RecordedExchange,
  type SessionRecording,
} from '../../protocol/recording.js';
import { consoleLogger, type DevServerLogger } from '../logger.js';
import { ExchangeMatcher } from './exchange-matcher.js';
import { ReplayClock, type ReplayStep } from './replay-clock.js';
import { ReplayTokens } from './replay-tokens.js';

export interface ReplayOptions {
  /** Default 0 (a free port). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /**
   * Playback speed of every recorded wait (a response's latency, the gaps between pieces of a
   * body): 1 (the default) keeps the recording's timing, 2 runs twice as fast, `Infinity`
   * sends everything at once (timing-sensitive runs may then go differently).
   */
  speed?: number;
  /**
   * How long (ms) a recorded answer waits for a request recorded before it that the client
   * has not sent yet (see "Matching and timing" on `replayRecording`), before playing on
   * without it. Default 5,000.
   */
  requestWaitMs?: number;
  /** Where requests the recording cannot answer are reported. Default: the console. */
  logger?: DevServerLogger;
}

/** A request the recording had no answer for: the client did something the recorded one did not. */
export interface UnmatchedRequest {
  method: string;
  path: string;
  kind: ExchangeKind;
}

export interface ReplayServer {
  /** The base URL to give the client (`baseURL`) and the app's route (`TRIGGER_API_URL`). */
  readonly url: string;
  /** How many recorded answers were served, per kind; `create`: session creates. */
  readonly served: Record<ExchangeKind | 'create', number>;
  /** Requests beyond the recording (empty when the client ran as recorded). */
  readonly unmatched: UnmatchedRequest[];
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set([
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'content-encoding',
]);

const DEFAULT_REQUEST_WAIT_MS = 5_000;

const CORS: Record<string, string> = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': '*',
};

/**
 * Serves a recording (from `recordSession` or the devtools panel) back to a client: each
 * request gets the recorded answer to the same request, with its status, headers, body pieces
 * at their recorded pace, and its end (a dropped connection is dropped again, an error
 * answered again). Tokens are minted stand-ins (unsigned, with the recorded scopes and time
 * left); nothing is checked. Point the same client run at `url` to reproduce what the
 * recording saw, in a test or in the playground (`durable-chat dev --replay file`).
 *
 * Matching and timing: a `.out` read gets a recorded read from the same cursor
 * (`Last-Event-ID`), an append the recorded attempt of the same append (`X-Part-Id`, mapped
 * from the recorded ids in order of first use), any other request one with the same method
 * and path, each recorded answer once; session creates get the recorded starts in order
 * (then the last again). The answers play on the recording's clock, which waits for a
 * recorded request the client has not sent yet (up to `requestWaitMs`), so no answer gets
 * ahead of a request it came after. A request with no recorded answer left is reported in
 * `unmatched`.
 */
export async function replayRecording(
  source: SessionRecording | string,
  options: ReplayOptions = {},
): Promise<ReplayServer> {
  const recording: unknown =
    typeof source === 'string' ? (JSON.parse(await readFile(source, 'utf8')) as unknown) : source;
  assertRecording(recording);
  const speed = options.speed ?? 1;
  if (!(speed > 0)) throw new TypeError(`speed must be above 0 (Infinity: no waits), not ${options.speed}`);
  const requestWaitMs = options.requestWaitMs ?? DEFAULT_REQUEST_WAIT_MS;
  if (!(requestWaitMs >= 0))
    throw new TypeError(`requestWaitMs must be 0 or more, not ${String(options.requestWaitMs)}`);
  const logger = options.logger ?? consoleLogger;
  const tokens = new ReplayTokens(recording.tokens);
  const matcher = new ExchangeMatcher(recording.exchanges);
  const clock = new ReplayClock(recording.exchanges, speed, requestWaitMs, (missing) =>
    logger.warn(
      `replay: the recorded ${missing.request.method} ${missing.request.path} (at ${missing.at} ms) has not come; playing on without it`,
    ),
  );
  const order = new Map(recording.exchanges.map((exchange, index) => [exchange, index]));
  const served: ReplayServer['served'] = { append: 0, out: 0, other: 0, create: 0 };
  const unmatched: UnmatchedRequest[] = [];
  const sockets = new Set<Socket>();

  const handle = (request: IncomingMessage, response: ServerResponse) => {
    const method = (request.method ?? 'GET').toUpperCase();
    const path = new URL(request.url ?? '/', 'http://replay').pathname;
    if (method === 'OPTIONS') {
      response.writeHead(204, {
        ...CORS,
        'access-control-allow-methods': 'GET, POST, OPTIONS',
        'access-control-allow-headers': request.headers['access-control-request-headers'] ?? '*',
        'access-control-max-age': '600',
      });
      response.end();
      return;
    }
    // Drain the request body: the answer does not depend on it.
    request.resume();
    if (method === 'POST' && path === '/api/v1/sessions') {
      const index = served.create++;
      const start = recording.starts[Math.min(index, recording.starts.length - 1)];
      // Past the recorded starts, the last answer again: a create is idempotent per chat, so
      // a client that refreshes its token once more than the recorded one is still on script.
      const sessionId = start?.sessionId ?? sessionIdFromRecording(recording);
      const body = {
        id: sessionId,
        externalId: recording.chatId,
        publicAccessToken: tokens.mint(start?.tokenId),
        isCached: start?.isCached ?? true,
        currentRunId: start?.currentRunId ?? null,
        runId: start?.currentRunId ?? null,
      };
      response.writeHead(body.isCached ? 200 : 201, { ...CORS, 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
      return;
    }
    const kind = exchangeKindOf(method, path);
    const exchange = matcher.match({
      method,
      path,
      kind,
      lastEventId: singleHeader(request.headers[HEADER.lastEventId]),
      partId: singleHeader(request.headers[HEADER.partId]),
    });
    if (exchange === undefined) {
      note(
        { method, path, kind },
        kind === 'out'
          ? `the recording has no read from this cursor (Last-Event-ID ${singleHeader(request.headers[HEADER.lastEventId]) ?? 'none'}) left`
          : 'the recording has no answer for this request left',
      );
      // Beyond the recording: a read waits as an idle long poll would (until the client
      // leaves); anything else fails loudly.
      if (kind !== 'out') {
        response.writeHead(500, { ...CORS, 'content-type': 'application/json' });
        response.end(
          JSON.stringify({ ok: false, error: `the recording has no answer for ${method} ${path}` }),
        );
      }
      return;
    }
    served[kind]++;
    play(exchange, response);
  };

  const note = (request: UnmatchedRequest, why: string) => {
    unmatched.push(request);
    logger.warn(`replay: ${request.method} ${request.path}: ${why}`);
  };

  const play = (exchange: RecordedExchange, response: ServerResponse) => {
    const steps: ReplayStep[] = [];
    const { failure, response: answer } = exchange;
    if (answer === undefined) {
      // No answer was recorded: a broken connection breaks again; one the client gave up on
      // (a timeout, a stop) stays unanswered until the client leaves again.
      if (failure !== undefined && !failure.aborted)
        steps.push({ at: failure.at, run: () => response.destroy() });
    } else {
      // Written pieces reach the socket before a recorded drop cuts it: a drop that took the
      // last piece with it would leave the client's cursor short of the recorded one.
      let flushed: Promise<void> = Promise.resolve();
      const write = (text: string) => {
        flushed = new Promise((resolve) => response.write(text, () => resolve()));
      };
      steps.push(
        {
          at: answer.at,
          run: () => {
            const headers: Record<string, string> = { ...CORS };
            for (const [name, value] of Object.entries(answer.headers)) {
              if (!HOP_BY_HOP.has(name) && !name.startsWith('access-control-'))
                headers[name] = tokens.fill(value);
            }
            response.writeHead(answer.status, headers);
            response.flushHeaders();
          },
        },
        ...answer.frames.map((frame) => ({ at: frame.at, run: () => write(tokens.fill(frame.text)) })),
      );
      const { end } = answer;
      if (end.type === 'complete') steps.push({ at: end.at, run: () => response.end() });
      else if (end.type === 'dropped')
        steps.push({ at: end.at, run: () => void flushed.then(() => response.destroy()) });
      // `aborted` / `open`: the client ended it, or it was still open: held until the client leaves.
    }
    // The client may have left since the step was due (its `close` is yet to come).
    const live = steps.map((step) => ({
      at: step.at,
      run: () => {
        if (!response.destroyed) step.run();
      },
    }));
    const cancel = clock.play(exchange, order.get(exchange) ?? 0, live);
    response.on('close', cancel);
  };

  const server = createServer(handle);
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    served,
    unmatched,
    close: () =>
      new Promise<void>((resolve) => {
        clock.close();
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function singleHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The session id the recorded requests used, for a recording that began after the start. */
function sessionIdFromRecording(recording: SessionRecording): string {
  for (const exchange of recording.exchanges) {
    const match = /\/sessions\/([^/]+)\//.exec(exchange.request.path);
    if (match?.[1] !== undefined) return decodeURIComponent(match[1]);
  }
  return recording.chatId;
}
