// @vitest-environment happy-dom
// A page reloaded mid-reply is a new page: nothing of the old one's memory is left, so the turn
// it drove is kept for it in this tab's sessionStorage at `pagehide`. Each import below after
// `vi.resetModules()` is such a new page. The browser case (a second tab takes the turn over
// meanwhile; no tab saved it before): test/examples/nextjs.test.ts, "the sending tab reloaded".
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ChatSessionState } from '../../src/client/session-store.js';

type LeftTurns = typeof import('../../src/session/left-turns.js');

/** A fresh page: the module's memory is empty; `navigation` is how the page was loaded. */
async function newPage(navigation: NavigationTimingType): Promise<LeftTurns> {
  vi.resetModules();
  const entries = (type: string) =>
    type === 'navigation' ? [{ type: navigation } as unknown as PerformanceEntry] : [];
  vi.spyOn(performance, 'getEntriesByType').mockImplementation(
    entries as typeof performance.getEntriesByType,
  );
  return import('../../src/session/left-turns.js');
}

const liveTurn = (turnStartCursor: number | undefined) => ({
  identity: '["chat-1"]',
  getState: () => ({ turnLive: true, closed: false, turnStartCursor }) as ChatSessionState,
});

afterEach(() => {
  vi.restoreAllMocks();
  sessionStorage.clear();
});

describe('the turn a page left midway, across a reload', () => {
  it('the reloaded page takes back the turn it drove, once', async () => {
    const before = await newPage('navigate');
    before.noteLeftTurn('["chat-1"]', 12);
    before.keepLeftTurnsForReload(() => {});
    const after = await newPage('reload');
    const warnings: string[] = [];
    expect(after.takeBackLeftTurn(liveTurn(10), (message) => warnings.push(message))).toBe(true);
    expect(after.takeBackLeftTurn(liveTurn(10), (message) => warnings.push(message))).toBe(false);
    expect(sessionStorage.length).toBe(0);
    expect(warnings).toEqual([]);
  });

  it('not a turn started after the page left (another tab sent it)', async () => {
    const before = await newPage('navigate');
    before.noteLeftTurn('["chat-1"]', 12);
    before.keepLeftTurnsForReload(() => {});
    const after = await newPage('reload');
    expect(after.takeBackLeftTurn(liveTurn(15), () => {})).toBe(false);
  });

  it('not in a duplicated tab (it copies sessionStorage, but is not the page that sent)', async () => {
    const before = await newPage('navigate');
    before.noteLeftTurn('["chat-1"]', 12);
    before.keepLeftTurnsForReload(() => {});
    const duplicate = await newPage('back_forward');
    expect(duplicate.takeBackLeftTurn(liveTurn(10), () => {})).toBe(false);
    expect(sessionStorage.length).toBe(0);
  });

  it('a page that drove nothing keeps nothing', async () => {
    const page = await newPage('navigate');
    page.keepLeftTurnsForReload(() => {});
    expect(sessionStorage.length).toBe(0);
  });

  it('storage that refuses the write (full, blocked) is reported, not thrown', async () => {
    const page = await newPage('navigate');
    page.noteLeftTurn('["chat-1"]', 12);
    vi.spyOn(sessionStorage, 'setItem').mockImplementationOnce(() => {
      throw new DOMException('quota exceeded', 'QuotaExceededError');
    });
    const warnings: string[] = [];
    expect(() => page.keepLeftTurnsForReload((message) => warnings.push(message))).not.toThrow();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/QuotaExceededError|quota exceeded/);
  });

  it('unreadable kept state is reported, not thrown', async () => {
    sessionStorage.setItem('durable-chat:turns-left-midway', '{not json');
    const after = await newPage('reload');
    const warnings: string[] = [];
    expect(after.takeBackLeftTurn(liveTurn(10), (message) => warnings.push(message))).toBe(false);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/could not keep the turns left midway/);
  });
});
