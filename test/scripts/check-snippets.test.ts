import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

// The snippet check is what keeps the docs' code compiling in CI: its conventions must do
// what the README says, and a broken snippet must fail it at the right Markdown line.
const root = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
mkdirSync(join(root, '.tmp'), { recursive: true });
const dir = mkdtempSync(join(root, '.tmp', 'snippet-fixture-'));
const file = relative(root, join(dir, 'fixture.md'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const fence = '```';
const lines = [
  '# Fixture', // 1
  '<!-- snippet-prelude', // 2
  'declare const chatId: string;', // 3
  '-->', // 4
  `${fence}tsx`, // 5
  "import { useSessionState } from 'durable-chat/react';", // 6
  'export const status = () => useSessionState(chatId, (state) => state.status.type);', // 7
  fence, // 8
  '', // 9
  `${fence}ts partial: only an outline`, // 10
  'new Thing(a?, b?)', // 11
  fence, // 12
  '', // 13
  '<!-- snippet-dir: test/conformance -->', // 14
  `${fence}ts`, // 15
  "import { defineConformanceSuite } from './define-conformance-suite.js';", // 16
  "defineConformanceSuite(() => ({ baseURL: 'http://x', secretKey: 'k', taskIdentifier: 't' }));", // 17
  fence, // 18
  '', // 19
  `${fence}ts`, // 20
  "import { SessionChatTransport } from 'durable-chat';", // 21
  'const transport: SessionChatTransport = new SessionChatTransport({', // 22
  "  baseURL: 'http://x',", // 23
  "  taskIdentifier: 't',", // 24
  "  startSession: async () => ({ publicAccessToken: 'token' }),", // 25
  '});', // 26
  'const wrong: number = transport.getState;', // 27
  fence, // 28
  '',
];
writeFileSync(join(dir, 'fixture.md'), lines.join('\n'));

async function checkSnippets(): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['scripts/check-snippets.mjs', file], {
      cwd: root,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

describe('scripts/check-snippets.mjs', () => {
  it('compiles the blocks with their prelude and folder, skips partial ones, and fails on the wrong one', async () => {
    const result = await checkSnippets();
    expect(result.stdout).toContain(`skip ${file}:10 (partial: only an outline)`);
    const errors = result.stderr.split('\n').filter((line) => /error TS\d+/.test(line));
    // Only the last block is wrong, and the error points at its Markdown line.
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(new RegExp(`^${file.replace(/[.]/g, '\\.')}:27:\\d+: error TS2322`));
    expect(result.stderr).toContain('3 TypeScript snippets checked, 1 skipped (partial); 1 error(s)');
    expect(result.code).toBe(1);
    // A failing run keeps its modules for a look; this one's are not needed.
    const kept = /the modules are in (\S+)/.exec(result.stderr)?.[1];
    expect(kept).toMatch(/^\.tmp\/snippets-/);
    rmSync(join(root, kept ?? ''), { recursive: true, force: true });
  }, 120_000);
});
