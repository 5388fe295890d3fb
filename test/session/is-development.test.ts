import { readFileSync } from 'node:fs';
import { runInNewContext } from 'node:vm';
import { transformSync } from 'esbuild';
import { describe, expect, it } from 'vitest';

// Dev-time warnings must stay out of production apps. A browser has no `process`: what decides
// there is the bundler's replacement of the literal `process.env.NODE_ENV`.
const source = readFileSync(new URL('../../src/session/is-development.ts', import.meta.url), 'utf8');

/** The module as a bundler emits it (`define`), run in a page's global scope (`globals`). */
function evaluate(define: Record<string, string>, globals: Record<string, unknown>): boolean {
  const { code } = transformSync(source, { loader: 'ts', format: 'cjs', define });
  const module = { exports: {} as { isDevelopment?: () => boolean } };
  runInNewContext(code, { module, exports: module.exports, ...globals });
  return module.exports.isDevelopment?.() ?? true;
}

describe('isDevelopment', () => {
  it('a production browser build (NODE_ENV replaced, no process global) is not development', () => {
    expect(evaluate({ 'process.env.NODE_ENV': '"production"' }, {})).toBe(false);
  });

  it('a development browser build is', () => {
    expect(evaluate({ 'process.env.NODE_ENV': '"development"' }, {})).toBe(true);
  });

  it('an unbundled page (no process, nothing replaced) or a process shim without env counts as development', () => {
    expect(evaluate({}, {})).toBe(true);
    expect(evaluate({}, { process: {} })).toBe(true);
  });

  it('Node reads NODE_ENV', () => {
    expect(evaluate({}, { process: { env: { NODE_ENV: 'production' } } })).toBe(false);
    expect(evaluate({}, { process: { env: {} } })).toBe(true);
  });
});
