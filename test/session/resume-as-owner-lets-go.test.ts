import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionPersistence } from '../../src/client/persistence.js';
import type { DevServer } from '../../src/dev-server/index.js';
import { uniqueChatId, waitFor } from '../transport/support/dev-server-fixture.js';
import { BOUND_MS, pauseTurn, startMomentsServer } from '../transport/support/moments.js';
import { type TabMode, TabsWorld } from './support/core-tabs.js';

/**
 * The race issue 19's last note left open: a tab reloaded while another tab's turn is live,
 * whose own resume (`useChat({ resume: true })` on mount) is already in flight when the owner
 * finishes and lets go. The reloaded tab then finds the lock free, and the record (written by
 * the owner before it let go) says the turn ended: the turn it is about to show is the other
 * tab's, so it must show it read-only, as a follower (no tool call answered, no transcript
 * saved), not as its own.
 *
 * To hold the moment, the reloaded tab's storage answers its first read late: it reads the
 * record as it was when the page loaded (the turn live) and hands it over once the owner has
 * let go (an async adapter, or a busy main thread, does the same).
 */

let server: DevServer;
beforeAll(async () => {
  server = await startMomentsServer();
});
afterAll(async () => {
  await server.close();
});

const TEXT = 'tell me a long story, in many small pieces please';
const EXPECTED = [`user: ${TEXT}`, `assistant: Echo: ${TEXT}`];

/** `inner`, whose first load reads at once and answers when `gate` opens. */
function lateFirstLoad(inner: SessionPersistence, gate: Promise<void>): SessionPersistence {
  let first = true;
  return {
    ...inner,
    load: async (chatId) => {
      const record = await inner.load(chatId);
      if (first) {
        first = false;
        await gate;
      }
      return record;
    },
  };
}

const MODES: TabMode[] = ['Web Locks', 'BroadcastChannel only'];

describe.each(MODES)('a reloaded tab resuming as the owner lets go (%s)', (mode) => {
  it('shows the ended turn read-only (followed): only the owner saves; both tabs end with the same transcript', async () => {
    const chatId = uniqueChatId('resume-as-owner-lets-go');
    const world = new TabsWorld(server, chatId, mode);
    try {
      const a = world.open('a');
      const b = world.open('b');
      await Promise.all([a.mounted, b.mounted]);
      const paused = pauseTurn(chatId, TEXT, 6); // mid-reply
      void a.send(TEXT);
      await waitFor(
        () => paused.reached && b.transcript().length === 2,
        BOUND_MS,
        'the live turn in both tabs',
      );

      // B reloads; its page reads the record (the turn live) but gets it only later.
      let open = () => {};
      const gate = new Promise<void>((resolve) => {
        open = resolve;
      });
      const saved = b.saved();
      await b.kill();
      const reloaded = world.open("b'", saved, lateFirstLoad(world.storage.adapter, gate));

      // The owner's turn runs to its end and it lets go (no announcement: the reply was announced).
      paused.release();
      await waitFor(
        () =>
          !a.busy &&
          JSON.stringify(a.transcript()) === JSON.stringify(EXPECTED) &&
          !a.handle.getTabState().owner &&
          world.appendsStored() === 1,
        BOUND_MS,
        'the owner to finish and let go',
      );
      open();

      await waitFor(
        () => !reloaded.busy && JSON.stringify(reloaded.transcript()) === JSON.stringify(EXPECTED),
        BOUND_MS,
        `the reloaded tab to show the turn (${JSON.stringify(reloaded.transcript())})`,
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(world.appendsStored()).toBe(1);
      // The turn is the owner's: the reloaded tab shows it as a follower and does not save it.
      expect(world.log.saves.map((save) => save.tab)).toEqual(['a']);
      expect(a.transcript()).toEqual(EXPECTED);
      expect(reloaded.transcript()).toEqual(EXPECTED);
      expect(world.log.errors).toEqual([]);
    } finally {
      expect(await world.close()).toBe(0);
    }
  });
});
