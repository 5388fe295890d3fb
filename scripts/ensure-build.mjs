// Builds dist/ when it is missing or older than its sources, at most once at a time.
//
// Used as vitest's globalSetup (vitest.config.ts, vitest.browser.config.ts), so a fresh
// clone's `npm test` tests the real build instead of failing on a missing dist/, and by
// `npm run test:browser` / `npm run check:snippets` from the command line. A lock makes
// concurrent runs (say `npm test` and `npm run test:browser` in two terminals) take turns:
// the second finds the build fresh and does not rebuild under the first one's feet.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const lockDir = join(root, '.tmp', 'build.lock');
const LOCK_WAIT_MS = 10 * 60_000;
const LOCK_POLL_MS = 250;

/** What the build reads: a change to any of these makes dist/ stale. */
const INPUT_FILES = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsup.config.ts'];
const INPUT_DIRS = ['src'];

/** Every file the package exposes (its `exports` map and `bin`), relative to the root. */
function outputFiles() {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const files = new Set();
  const collect = (value) => {
    if (typeof value === 'string') files.add(value);
    else if (value !== null && typeof value === 'object')
      for (const inner of Object.values(value)) collect(inner);
  };
  collect(manifest.exports);
  collect(manifest.bin);
  return [...files].filter((file) => file.startsWith('./dist/'));
}

// Directories count too: deleting or renaming a source file changes only its folder's mtime.
function newestMtime(dir) {
  let newest = statSync(dir).mtimeMs;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const mtime = entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs;
    if (mtime > newest) newest = mtime;
  }
  return newest;
}

/** Why dist/ must be (re)built, or undefined when it is fresh. */
export function staleReason() {
  let oldestOutput = Number.POSITIVE_INFINITY;
  for (const file of outputFiles()) {
    const path = join(root, file);
    if (!existsSync(path)) return `${file} is missing`;
    oldestOutput = Math.min(oldestOutput, statSync(path).mtimeMs);
  }
  for (const file of INPUT_FILES) {
    const path = join(root, file);
    if (existsSync(path) && statSync(path).mtimeMs > oldestOutput) return `${file} is newer than dist/`;
  }
  for (const dir of INPUT_DIRS) {
    if (newestMtime(join(root, dir)) > oldestOutput) return `${dir}/ is newer than dist/`;
  }
  return undefined;
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function acquireLock() {
  mkdirSync(join(root, '.tmp'), { recursive: true });
  const deadline = Date.now() + LOCK_WAIT_MS;
  let announced = false;
  for (;;) {
    try {
      mkdirSync(lockDir);
      writeFileSync(join(lockDir, 'pid'), String(process.pid));
      return;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
    }
    // A holder that died (Ctrl-C mid-build) leaves its lock behind: take it over. A lock
    // without a pid file yet belongs to a process between its mkdir and its write.
    const pidFile = join(lockDir, 'pid');
    const holder = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) : undefined;
    if (holder !== undefined && !isAlive(holder)) {
      rmSync(lockDir, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `ensure-build: ${lockDir} is still held by process ${holder} after ${LOCK_WAIT_MS / 1000} s`,
      );
    }
    if (!announced) {
      console.log(`ensure-build: waiting for the build of process ${holder ?? '(starting)'}`);
      announced = true;
    }
    await sleep(LOCK_POLL_MS);
  }
}

function runBuild() {
  return new Promise((resolve, reject) => {
    // Quiet unless it fails: the build's own log would bury the test output.
    const child = spawn('npm', ['run', 'build'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (data) => {
      output += data;
    });
    child.stderr.on('data', (data) => {
      output += data;
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code === 0) resolve();
      else
        reject(
          new Error(`ensure-build: \`npm run build\` failed (code ${code}, signal ${signal}):\n${output}`),
        );
    });
  });
}

/** Builds dist/ unless it is fresh; resolves once dist/ matches src/. */
export async function ensureBuild() {
  if (staleReason() === undefined) return;
  await acquireLock();
  try {
    // Checked again under the lock: another process may have just built it.
    const reason = staleReason();
    if (reason === undefined) return;
    const started = Date.now();
    console.log(`ensure-build: building dist/ (${reason})`);
    await runBuild();
    console.log(`ensure-build: built dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    rmSync(lockDir, { recursive: true, force: true });
  }
}

// vitest runs a globalSetup once per project (the root, ai6, ai7) in one process; the
// promise on globalThis makes that one check and at most one build per test run.
const once = Symbol.for('durable-chat.ensure-build');

/** vitest globalSetup entry. */
export default function setup() {
  globalThis[once] ??= ensureBuild();
  return globalThis[once];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  ensureBuild().catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
