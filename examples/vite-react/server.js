// The app's Node server: the chat route (the one place that holds the secret key), the
// transcripts of past turns (a real app keeps them in its database), and the built app.
// `npm run build && npm start`; in development `npm run dev` proxies `/api` here.
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createNodeChatRouteHandler } from 'durable-chat/server';

const baseURL = process.env.DURABLE_CHAT_BASE_URL ?? 'http://127.0.0.1:3030';
const taskIdentifier = process.env.DURABLE_CHAT_TASK ?? 'demo';
const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? '127.0.0.1';
const dist = fileURLToPath(new URL('./dist/', import.meta.url));

const chatRoute = createNodeChatRouteHandler({
  baseURL,
  secretKey: process.env.DURABLE_CHAT_SECRET_KEY ?? '',
  taskIdentifier,
  // A real app checks its signed-in user here (a session cookie); the example lets anyone
  // in, so it must not be deployed as it is.
  authorize: () => true,
});

/** chat id → `{ messages, cursor }` as the browser saved it. In memory: a database in a real app. */
const transcripts = new Map();
const MAX_TRANSCRIPT_BYTES = 1024 * 1024;

/** @param {import('node:http').ServerResponse} res @param {number} status @param {unknown} body */
function sendJson(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

/** @param {import('node:http').IncomingMessage} req @returns {Promise<string | undefined>} */
async function readText(req) {
  let text = '';
  for await (const chunk of req) {
    text += chunk;
    if (text.length > MAX_TRANSCRIPT_BYTES) return undefined;
  }
  return text;
}

/** @param {import('node:http').IncomingMessage} req @param {import('node:http').ServerResponse} res @param {string} chatId */
async function transcriptRoute(req, res, chatId) {
  if (req.method === 'GET') return sendJson(res, 200, transcripts.get(chatId) ?? null);
  if (req.method !== 'PUT') return sendJson(res, 405, { error: 'use GET or PUT' });
  const text = await readText(req);
  if (text === undefined) return sendJson(res, 413, { error: 'transcript too large' });
  try {
    const saved = JSON.parse(text);
    if (!Array.isArray(saved?.messages)) return sendJson(res, 400, { error: 'messages must be an array' });
    transcripts.set(chatId, { messages: saved.messages, cursor: saved.cursor ?? null });
    return sendJson(res, 200, { saved: true });
  } catch {
    return sendJson(res, 400, { error: 'not JSON' });
  }
}

const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml' };

/** @param {string} pathname @param {import('node:http').ServerResponse} res */
async function serveApp(pathname, res) {
  const file = normalize(join(dist, pathname === '/' ? 'index.html' : pathname));
  const inside = file.startsWith(dist) ? file : join(dist, 'index.html');
  try {
    const body = await readFile(inside);
    res.writeHead(200, {
      'content-type':
        TYPES[/** @type {keyof typeof TYPES} */ (extname(inside))] ?? 'application/octet-stream',
    });
    res.end(body);
  } catch {
    // Any other path is the app's own (`/?chat=…`): the single page answers it.
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(await readFile(join(dist, 'index.html')));
  }
}

const server = createServer((req, res) => {
  const { pathname } = new URL(req.url ?? '/', 'http://localhost');
  if (pathname === '/api/chat-session') return void chatRoute(req, res);
  if (pathname === '/api/config') {
    // The session service as the browser reaches it, read at run time: one build, any service.
    return sendJson(res, 200, {
      baseURL: process.env.DURABLE_CHAT_PUBLIC_BASE_URL ?? baseURL,
      taskIdentifier,
    });
  }
  const transcript = /^\/api\/transcripts\/([^/]+)$/.exec(pathname);
  if (transcript?.[1] !== undefined) {
    return void transcriptRoute(req, res, decodeURIComponent(transcript[1])).catch((error) => {
      console.error('transcript route failed', error);
      if (!res.headersSent) sendJson(res, 500, { error: 'failed' });
    });
  }
  serveApp(pathname, res).catch((error) => {
    console.error('could not serve the app (run `npm run build` first)', error);
    if (!res.headersSent) sendJson(res, 500, { error: 'no build' });
  });
});

server.listen(port, host, () => process.stdout.write(`Ready: http://${host}:${port}\n`));
