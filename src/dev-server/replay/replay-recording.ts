import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import {
  assertRecording,
  type ExchangeKind,
  exchangeKindOf,
  type RecordedExchange,
  type SessionRecording,
} from '../../protocol/recording.js';
import { consoleLogger, type DevServerLogger } from '../logger.js';
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

const CORS: Record<string, string> = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': '*',
};

/**
 * Serves a recording (from `recordSession` or the devtools panel) back to a client: the n-th
 * append, `.out` read and session create get the n-th recorded answer, with its status,
 * headers, body pieces at their recorded pace, and its end (a dropped connection is dropped
 * again, an error answered again). Tokens are minted stand-ins (unsigned, with the recorded
 * scopes and time left); nothing is checked. Point the same client run at `url` to reproduce
 * what the recording saw, in a test or in the playground (`durable-chat dev --replay file`).
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
  const logger = options.logger ?? consoleLogger;
  const tokens = new ReplayTokens(recording.tokens);
  const queues: Record<ExchangeKind, RecordedExchange[]> = { append: [], out: [], other: [] };
  for (const exchange of recording.exchanges) queues[exchange.kind].push(exchange);
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
    const exchange = queues[kind][served[kind]];
    if (exchange === undefined) {
      note({ method, path, kind }, 'the recording has no more answers of this kind');
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

  // The recording's clock, anchored when the first recorded request arrives: every step is
  // played no earlier than its place on that clock, so steps of different requests keep the
  // order they had (an append's answer before or after a read's batch), and no earlier than
  // its delay after its own request, so a client that runs late still sees each wait.
  let anchor: number | undefined;
  const play = (exchange: RecordedExchange, response: ServerResponse) => {
    const arrived = Date.now();
    anchor ??= arrived - exchange.at / speed;
    const origin = anchor;
    const timers: ReturnType<typeof setTimeout>[] = [];
    const at = (recordedAt: number, run: () => void) => {
      const due = Math.max(
        origin + recordedAt / speed,
        arrived + Math.max(0, recordedAt - exchange.at) / speed,
      );
      timers.push(setTimeout(run, Math.max(0, due - Date.now())));
    };
    response.on('close', () => {
      for (const timer of timers) clearTimeout(timer);
    });
    const { failure, response: answer } = exchange;
    if (answer === undefined) {
      // No answer was recorded: a broken connection breaks again; one the client gave up on
      // (a timeout, a stop) stays unanswered until the client leaves again.
      if (failure !== undefined && !failure.aborted) at(failure.at, () => response.destroy());
      return;
    }
    // One step at a time, each scheduled once the one before it ran: pieces of a body are
    // written in their recorded order whatever the timers do.
    const steps: { at: number; run: () => void }[] = [
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
      ...answer.frames.map((frame) => ({ at: frame.at, run: () => response.write(tokens.fill(frame.text)) })),
    ];
    const { end } = answer;
    if (end.type === 'complete') steps.push({ at: end.at, run: () => response.end() });
    else if (end.type === 'dropped') steps.push({ at: end.at, run: () => response.destroy() });
    // `aborted` / `open`: the client ended it, or it was still open: held until the client leaves.
    const next = (index: number) => {
      const step = steps[index];
      if (step === undefined || response.destroyed) return;
      at(step.at, () => {
        step.run();
        next(index + 1);
      });
    };
    next(0);
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
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The session id the recorded requests used, for a recording that began after the start. */
function sessionIdFromRecording(recording: SessionRecording): string {
  for (const exchange of recording.exchanges) {
    const match = /\/sessions\/([^/]+)\//.exec(exchange.request.path);
    if (match?.[1] !== undefined) return decodeURIComponent(match[1]);
  }
  return recording.chatId;
}
