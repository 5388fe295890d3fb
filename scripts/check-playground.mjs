// Runs CONTRIBUTING.md's main command, `npm run playground`, as a newcomer does (builds
// included), waits for the URL it prints to serve the playground app, then stops it.
//
// PORT=0 picks a free port, so a playground already running on 5173 cannot answer for this
// one. The command runs in its own process group and the whole group is stopped, so no
// npm, tsx or server process outlives the check.
import { spawn } from 'node:child_process';

const WAIT_MS = Number(process.env.PLAYGROUND_CHECK_TIMEOUT_MS ?? 300_000);
const STOP_GRACE_MS = 10_000;
const URL_LINE = /Playground: (http:\/\/\S+)/;

const child = spawn('npm', ['run', 'playground'], {
  env: { ...process.env, PORT: '0' },
  stdio: ['ignore', 'pipe', 'pipe'],
  detached: true,
});
let output = '';
const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
const collect = (data) => {
  output += data;
};
child.stdout.on('data', collect);
child.stderr.on('data', collect);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitForUrl(deadline) {
  for (;;) {
    const match = URL_LINE.exec(output);
    if (match?.[1]) return match[1];
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `npm run playground exited (${child.exitCode ?? child.signalCode}) before printing its URL`,
      );
    }
    if (Date.now() > deadline) throw new Error(`no "Playground: <url>" line after ${WAIT_MS / 1000} s`);
    await sleep(250);
  }
}

/** The page, its script and the config endpoint: the app itself, not just any 200. */
async function checkApp(url) {
  const page = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  const html = await page.text();
  if (page.status !== 200 || !html.includes('<title>durable-chat playground</title>')) {
    throw new Error(`${url} answered ${page.status} without the playground's page:\n${html.slice(0, 500)}`);
  }
  const script = /<script type="module"[^>]*src="([^"]+)"/.exec(html)?.[1];
  if (script === undefined) throw new Error(`${url}: the page has no module script (not the built app)`);
  const bundle = await fetch(new URL(script, url), { signal: AbortSignal.timeout(10_000) });
  const code = await bundle.text();
  if (bundle.status !== 200 || !code.includes('durable-chat')) {
    throw new Error(`${script} answered ${bundle.status} without the app's code`);
  }
  const config = await fetch(new URL('/playground/config', url), { signal: AbortSignal.timeout(10_000) });
  if (config.status !== 200) throw new Error(`/playground/config answered ${config.status}`);
  await config.json();
  return script;
}

async function stop() {
  if (child.exitCode !== null || child.signalCode !== null) return;
  // The negative pid signals the whole group: npm, its shell, tsx and the server.
  process.kill(-child.pid, 'SIGTERM');
  const timer = setTimeout(() => process.kill(-child.pid, 'SIGKILL'), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}

function groupAlive() {
  try {
    process.kill(-child.pid, 0);
    return true;
  } catch {
    return false;
  }
}

const started = Date.now();
try {
  const url = await waitForUrl(started + WAIT_MS);
  const script = await checkApp(url);
  console.log(
    `check-playground: ${url} served the app (page, ${script}, /playground/config) ` +
      `${((Date.now() - started) / 1000).toFixed(1)} s after \`npm run playground\``,
  );
} catch (error) {
  console.error(`check-playground: ${error instanceof Error ? error.message : error}`);
  console.error(`--- npm run playground output ---\n${output}`);
  process.exitCode = 1;
} finally {
  await stop();
  // npm exits on SIGTERM before its children are gone; give the group a moment, then insist.
  for (let waited = 0; groupAlive() && waited < STOP_GRACE_MS; waited += 100) await sleep(100);
  if (groupAlive()) {
    process.kill(-child.pid, 'SIGKILL');
    console.error('check-playground: the playground ignored SIGTERM; killed');
    process.exitCode = 1;
  }
}
