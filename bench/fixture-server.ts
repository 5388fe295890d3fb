import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { encodeDoneEvent, encodeErrorEvent } from 'durable-chat';
import { type EncodedTurn, encodeTurn } from './fixture-encoding.js';
import { handleAppend, handleCreate, sendJson } from './fixture-routes.js';
import { FIRST_APPEND_SEQ, followUpTurn, type TurnSpec, turnNameOf } from './fixture-turn.js';

/** What the fixture server streams for one turn name, and how it misbehaves. */
export interface ServedTurnSpec extends TurnSpec {
  /** Cut the first `.out` connection right after the event holding this `seq_num`. */
  cutAfterSeq?: number;
  /** `destroy`: the socket dies mid-body. `error-event`: an SSE `error` event, then a clean close. */
  cutMode?: 'destroy' | 'error-event';
  /** Pace the turn: one event every `intervalMs` (live model speed) instead of as fast as possible. */
  intervalMs?: number;
  /**
   * A chat of many turns: its `n`-th message append starts turn `n` ({@link followUpTurn}),
   * whose records follow the previous turn's on `.out`. Without it every append of a chat
   * streams the same single turn. Not combined with `cutAfterSeq`.
   */
  followUps?: boolean;
}

export interface FixtureServerOptions {
  port?: number;
  /**
   * Holds every request this many ms before handling it (0, the default: none), as a network
   * with this round trip would: every response (headers, JSON answers) reaches the client at
   * least this long after its request went out, and so do the SSE records a message's append
   * starts, on a `.out` read already open (they are written when the append is handled).
   */
  responseDelayMs?: number;
}

export interface SessionStats {
  appends: number;
  /** `Last-Event-ID` of every `.out` request, in order (`null` when absent). */
  outCursors: (string | null)[];
}

export interface FixtureServer {
  url: string;
  stats(chatId: string): SessionStats | undefined;
  close(): Promise<void>;
}

interface SessionState extends SessionStats {
  appended: boolean;
  waiters: (() => void)[];
}

const WRITE_CHUNK_BYTES = 64 * 1024;
/** `GET /bench/stats/{chatId}`: the session's {@link SessionStats}. */
export const STATS_PATH = '/bench/stats/';
/** `GET /bench/process`: the server process's CPU usage and RSS. */
export const PROCESS_PATH = '/bench/process';

/**
 * A protocol server with no logic: every session streams a pre-encoded turn after its
 * first append, so nearly all of the server's work is copying bytes. Run it in a child
 * process (fixture-server-child.ts) to keep its CPU out of the client's figures.
 */
export async function startFixtureServer(
  specs: ServedTurnSpec[],
  options: FixtureServerOptions = {},
): Promise<FixtureServer> {
  const { port = 0, responseDelayMs = 0 } = options;
  const turns = new Map<string, EncodedTurn & { spec: ServedTurnSpec }>(
    specs.map((spec) => [spec.name, encodeTurn(spec)]),
  );
  // Turn n of a multi-turn chat, encoded on first use and kept (every chat streams the same).
  const followUps = new Map<string, EncodedTurn>();
  const followUpOf = (spec: ServedTurnSpec, index: number): EncodedTurn => {
    const key = `${spec.name}#${index}`;
    let encoded = followUps.get(key);
    if (encoded === undefined) {
      encoded = index === 1 ? turns.get(spec.name) : encodeTurn(followUpTurn(spec, index));
      if (encoded === undefined) throw new Error(`no turn ${spec.name}`);
      followUps.set(key, encoded);
    }
    return encoded;
  };
  const sessions = new Map<string, SessionState>();
  const sessionOf = (id: string): SessionState => {
    const chatId = id.startsWith('session_') ? id.slice('session_'.length) : id;
    let state = sessions.get(chatId);
    if (state === undefined) {
      state = { appends: 0, outCursors: [], appended: false, waiters: [] };
      sessions.set(chatId, state);
    }
    return state;
  };

  const server = createServer((req, res) => {
    (responseDelayMs > 0 ? delay(responseDelayMs).then(() => route(req, res)) : route(req, res)).catch(
      (error: unknown) => {
        console.error('fixture server: request failed', error);
        if (!res.headersSent) sendJson(res, 500, { ok: false, error: 'fixture server failure' });
        else res.destroy();
      },
    );
  });

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (req.method === 'POST' && path === '/api/v1/sessions') return handleCreate(req, res);
    if (req.method === 'GET' && path === PROCESS_PATH) {
      // The server's own CPU, so a report can show it stayed out of the client's way.
      return sendJson(res, 200, { cpu: process.cpuUsage(), rssBytes: process.memoryUsage.rss() });
    }
    if (req.method === 'GET' && path.startsWith(STATS_PATH)) {
      // Lets a bench worker check that a client resumed with a cursor instead of replaying.
      const stats = sessions.get(decodeURIComponent(path.slice(STATS_PATH.length)));
      return sendJson(res, stats === undefined ? 404 : 200, {
        appends: stats?.appends ?? 0,
        outCursors: stats?.outCursors ?? [],
      });
    }
    const match = /^\/realtime\/v1\/sessions\/([^/]+)\/(out|in\/append)$/.exec(path);
    if (match === null || match[1] === undefined)
      return sendJson(res, 404, { ok: false, error: 'not found' });
    if (!/^Bearer \S+/.test(req.headers.authorization ?? '')) {
      return sendJson(res, 401, { ok: false, error: 'missing bearer token' });
    }
    const id = decodeURIComponent(match[1]);
    const state = sessionOf(id);
    if (match[2] === 'in/append' && req.method === 'POST') {
      const appended = await handleAppend(req, res, state.appends + FIRST_APPEND_SEQ);
      if (appended) {
        state.appends++;
        state.appended = true;
        for (const wake of state.waiters.splice(0)) wake();
      }
      return;
    }
    if (match[2] === 'out' && req.method === 'GET') return streamOut(req, res, id, state);
    return sendJson(res, 405, { ok: false, error: 'method not allowed' });
  }

  async function streamOut(req: IncomingMessage, res: ServerResponse, id: string, state: SessionState) {
    if (!(req.headers.accept ?? '').includes('text/event-stream')) {
      return sendJson(res, 406, { ok: false, error: 'not an SSE caller' });
    }
    const cursorHeader = req.headers['last-event-id'];
    const rawCursor = typeof cursorHeader === 'string' ? cursorHeader : null;
    state.outCursors.push(rawCursor);
    const connection = state.outCursors.length;
    const cursor = rawCursor !== null && /^\d+$/.test(rawCursor) ? Number(rawCursor) : -1;
    const turn = turns.get(turnNameOf(id.replace(/^session_/, '')));
    if (turn === undefined) return sendJson(res, 404, { ok: false, error: 'unknown turn' });
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'x-stream-version': 'v2',
    });
    res.flushHeaders();
    let closed = false;
    res.on('close', () => {
      closed = true;
    });
    if (turn.spec.followUps === true) return streamTurns(req, res, turn.spec, state, cursor, () => closed);
    if (!state.appended) await new Promise<void>((wake) => state.waiters.push(wake));
    const { spec } = turn;
    const cutAt = connection === 1 ? spec.cutAfterSeq : undefined;
    let sent = cursor;
    for (const piece of turn.piecesFrom(cursor, spec.intervalMs === undefined ? WRITE_CHUNK_BYTES : 0)) {
      if (closed) return;
      if (cutAt !== undefined && piece.lastSeq >= cutAt) {
        await write(res, turn.slice(sent, cutAt));
        return cut(res, spec.cutMode ?? 'destroy');
      }
      if (!(await write(res, piece.bytes))) return;
      sent = piece.lastSeq;
      if (spec.intervalMs !== undefined) await delay(spec.intervalMs);
    }
    // The real service holds the long poll open; clients end the read at turn-complete.
    const timeoutSeconds = Number(req.headers['timeout-seconds'] ?? 60);
    const timer = setTimeout(() => res.end(encodeDoneEvent()), Math.min(timeoutSeconds, 600) * 1000);
    res.on('close', () => clearTimeout(timer));
  }

  /**
   * A multi-turn chat's `.out`: every turn after `cursor` that an append has started, waiting
   * (the long poll held open) for the next append when caught up.
   */
  async function streamTurns(
    req: IncomingMessage,
    res: ServerResponse,
    spec: ServedTurnSpec,
    state: SessionState,
    cursor: number,
    isClosed: () => boolean,
  ): Promise<void> {
    const timeoutSeconds = Number(req.headers['timeout-seconds'] ?? 60);
    const timer = setTimeout(() => res.end(encodeDoneEvent()), Math.min(timeoutSeconds, 600) * 1000);
    res.on('close', () => clearTimeout(timer));
    let sent = cursor;
    for (let index = 1; !isClosed(); index++) {
      const encoded = followUpOf(spec, index);
      if (encoded.turn.lastSeq <= sent) continue;
      while (state.appends < index && !isClosed()) {
        await new Promise<void>((wake) => {
          const done = () => {
            res.off('close', done);
            wake();
          };
          state.waiters.push(done);
          res.on('close', done);
        });
      }
      for (const piece of encoded.piecesFrom(sent, WRITE_CHUNK_BYTES)) {
        if (isClosed() || !(await write(res, piece.bytes))) return;
        sent = piece.lastSeq;
      }
    }
  }

  // Idle keep-alive sockets must outlive a long turn: a server closing one first races
  // the client reusing it ("other side closed"), a failure of the bench, not the client.
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 125_000;
  // A deep accept queue: a thousand sessions connect at once in the scale scenario.
  server.listen({ port, host: '127.0.0.1', backlog: 4096 });
  await once(server, 'listening');
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    stats: (chatId) => {
      const state = sessions.get(chatId);
      return state === undefined ? undefined : { appends: state.appends, outCursors: [...state.outCursors] };
    },
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

async function write(res: ServerResponse, bytes: Buffer): Promise<boolean> {
  if (bytes.length === 0 || res.destroyed) return !res.destroyed;
  if (res.write(bytes)) return true;
  return new Promise<boolean>((resolve) => {
    const settle = (drained: boolean) => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(drained);
    };
    const onDrain = () => settle(true);
    const onClose = () => settle(false);
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
}

async function cut(res: ServerResponse, mode: 'destroy' | 'error-event'): Promise<void> {
  if (mode === 'error-event') {
    res.end(encodeErrorEvent('storage backend restarting'));
    return;
  }
  // Let the bytes written so far reach the client before the connection dies.
  await new Promise<void>((flushed) => res.write('', () => flushed()));
  res.socket?.destroy();
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
