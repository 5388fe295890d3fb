import { describe, expect, it } from 'vitest';
import {
  localStoragePersistence,
  memoryPersistence,
  type PersistedChatRecord,
  parsePersistedRecord,
} from '../../src/client/persistence.js';
import { PersistenceBinding } from '../../src/client/persistence-binding.js';
import { createSessionStore } from '../../src/client/session-store.js';

const record: PersistedChatRecord = {
  version: 1,
  chatId: 'c1',
  sessionId: 'session_1',
  publicAccessToken: 'a.b.c',
  lastEventId: 12,
  turnLive: true,
  turnStored: true,
  turnStartCursor: 7,
  closed: false,
  closedReason: null,
};

/** `record` read back: its live turn as the ledger's one entry. */
const loaded = { ...record, turns: [{ id: 0, kind: 'found', state: 'stored', startCursor: 7 }] };

function fakeStorage() {
  const items = new Map<string, string>();
  return {
    items,
    getItem: (key: string) => items.get(key) ?? null,
    setItem: (key: string, value: string) => void items.set(key, value),
    removeItem: (key: string) => void items.delete(key),
  };
}

describe('parsePersistedRecord', () => {
  it('accepts a record, as an object or as JSON text', () => {
    expect(parsePersistedRecord(record, 'c1')).toEqual(loaded);
    expect(parsePersistedRecord(JSON.stringify(record), 'c1')).toEqual(loaded);
  });

  it('reads a record written before `turnStored` existed as not stored (a resume then peeks)', () => {
    const { turnStored: _, ...older } = record;
    expect(parsePersistedRecord(older, 'c1')).toEqual({
      ...record,
      turnStored: false,
      turns: [{ id: 0, kind: 'found', state: 'sent', startCursor: 7 }],
    });
  });

  it('keeps the live turn’s own `.in` seqs (0 included) and drops unusable ones without discarding the record', () => {
    const withSeqs = { ...record, turnInSeq: 0, turnPriorInSeq: 3 };
    expect(parsePersistedRecord(JSON.stringify(withSeqs), 'c1')).toMatchObject({
      turnInSeq: 0,
      turnPriorInSeq: 3,
    });
    const parsed = parsePersistedRecord({ ...record, turnInSeq: -2, turnPriorInSeq: 'x' }, 'c1');
    expect(parsed).toMatchObject({ turnLive: true, turnInSeq: undefined, turnPriorInSeq: undefined });
  });

  it('keeps queued turns (a seq, or null for one stored without) and drops an unusable list without discarding the record', () => {
    const queued = { ...record, queuedTurns: [4, null, 0] };
    expect(parsePersistedRecord(JSON.stringify(queued), 'c1')).toMatchObject({ queuedTurns: [4, null, 0] });
    for (const bad of [[4, -1], [4, 'x'], {}, Array.from({ length: 17 }, (_, index) => index)]) {
      const parsed = parsePersistedRecord({ ...record, queuedTurns: bad }, 'c1');
      expect(parsed).toMatchObject({ turnLive: true, queuedTurns: undefined });
    }
  });

  it('reads a record of the released format (no `turns`) into ledger entries: the stopped turn, the live one with its unanswered append, the queued actions', () => {
    const released = {
      ...record,
      turnStored: false,
      stoppedTurn: 'started',
      pendingAppend: { partId: 'part-1', body: '{"type":"submit"}' },
      turnPriorInSeq: 2,
      queuedTurns: [4, null],
    };
    const parsed = parsePersistedRecord(JSON.stringify(released), 'c1') as PersistedChatRecord;
    expect(parsed.turns).toEqual([
      { id: 0, kind: 'found', state: 'stopped', stopMark: 'started' },
      {
        id: 1,
        kind: 'message',
        state: 'sent',
        partId: 'part-1',
        body: '{"type":"submit"}',
        priorSeq: 2,
        startCursor: 7,
      },
      { id: 2, kind: 'queued', state: 'queued', seq: 4 },
      { id: 3, kind: 'queued', state: 'queued' },
    ]);
    // The fields beside `turns` are read from it: the same as the released record said.
    expect(parsed).toMatchObject({
      turnLive: true,
      turnStored: false,
      stoppedTurn: 'started',
      pendingAppend: released.pendingAppend,
      turnStartCursor: 7,
      turnPriorInSeq: 2,
      queuedTurns: [4, null],
    });
  });

  it('reads the live turn from `turns` when present, and from the fields beside it when `turns` is unusable', () => {
    const turns = [{ id: 3, kind: 'action', state: 'started', seq: 5, startCursor: 9 }];
    // The ledger wins over fields that say otherwise (written by a tab on an older build).
    expect(parsePersistedRecord({ ...record, turnLive: false, turns }, 'c1')).toMatchObject({
      turnLive: true,
      turnStored: true,
      turnStartCursor: 9,
      turnInSeq: 5,
      turns,
    });
    const bad = [{ id: 3, kind: 'action', state: 'dancing' }];
    expect(parsePersistedRecord({ ...record, turns: bad }, 'c1')).toMatchObject({
      turnLive: true,
      turnStartCursor: 7,
      turns: [{ id: 0, kind: 'found', state: 'stored', startCursor: 7 }],
    });
  });

  it('treats missing optional fields as undefined', () => {
    const parsed = parsePersistedRecord({ version: 1, chatId: 'c1', turnLive: false, closed: false }, 'c1');
    expect(parsed).toMatchObject({ sessionId: undefined, lastEventId: undefined, closedReason: null });
  });

  it.each([
    ['not JSON', '{oops'],
    ['not an object', 42],
    ['unknown version 2', { ...record, version: 2 }],
    ['stored for another chat', { ...record, chatId: 'other' }],
    ['bad cursor', { ...record, lastEventId: -1 }],
    ['bad cursor', { ...record, turnStartCursor: 1.5 }],
    ['bad session id or token', { ...record, publicAccessToken: 5 }],
    ['bad flags', { ...record, closed: 'no' }],
  ])('rejects a record that is %s', (reason, value) => {
    expect(parsePersistedRecord(value, 'c1')).toBe(reason);
  });
});

describe('adapters', () => {
  it('memoryPersistence stores a copy per chat', async () => {
    const adapter = memoryPersistence();
    await adapter.save('c1', record);
    expect(await adapter.load('c1')).toEqual(record);
    await adapter.remove('c1');
    expect(await adapter.load('c1')).toBeUndefined();
  });

  it('localStoragePersistence writes one JSON string per chat under its prefix', async () => {
    const storage = fakeStorage();
    const adapter = localStoragePersistence({ storage, prefix: 'x:' });
    await adapter.save('c1', record);
    expect([...storage.items.keys()]).toEqual(['x:c1']);
    expect(parsePersistedRecord(await adapter.load('c1'), 'c1')).toEqual(loaded);
    await adapter.remove('c1');
    expect(await adapter.load('c1')).toBeUndefined();
  });

  it('localStoragePersistence keeps nothing (and does not throw) without a storage, and says so once with the fix', async () => {
    const warnings: string[] = [];
    const adapter = localStoragePersistence({ warn: (message) => warnings.push(message) });
    await adapter.save('c1', record);
    expect(await adapter.load('c1')).toBeUndefined();
    await adapter.save('c1', record);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/no localStorage here .*nothing is kept across reloads.*memoryPersistence/);
  });
});

describe('PersistenceBinding', () => {
  it('discards a corrupt record with a warning instead of crashing', async () => {
    const storage = fakeStorage();
    storage.setItem('durable-chat:c1', '{"version":1,"chatId":');
    const warnings: string[] = [];
    const binding = new PersistenceBinding(
      'c1',
      createSessionStore('c1'),
      localStoragePersistence({ storage }),
      (m) => warnings.push(m),
    );
    expect(await binding.load()).toBeUndefined();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('corrupt');
    expect(storage.items.size).toBe(0);
  });

  it('warns when the adapter fails to load, and carries on', async () => {
    const warnings: string[] = [];
    const failing = { load: () => Promise.reject(new Error('disk')), save: () => {}, remove: () => {} };
    const binding = new PersistenceBinding('c1', createSessionStore('c1'), failing, (m) => warnings.push(m));
    expect(await binding.load()).toBeUndefined();
    expect(warnings[0]).toContain('could not load');
  });

  it('coalesces a burst of changes into few writes of the latest state', async () => {
    const saves: PersistedChatRecord[] = [];
    const store = createSessionStore('c1');
    const adapter = {
      load: () => undefined,
      save: (_: string, r: PersistedChatRecord) => void saves.push(r),
      remove: () => {},
    };
    const binding = new PersistenceBinding('c1', store, adapter, () => {});
    binding.start();
    for (let seq = 0; seq < 100; seq++) store.setState({ lastEventId: seq });
    store.setState({ status: { type: 'streaming' } }); // not persisted: no write of its own
    await binding.flush();
    expect(saves).toHaveLength(1);
    expect(saves[0]?.lastEventId).toBe(99);
  });

  it('writes again when the state changes during a slow save, ending on the latest state', async () => {
    const saves: (number | undefined)[] = [];
    const store = createSessionStore('c1');
    let release: () => void = () => {};
    const adapter = {
      load: () => undefined,
      save: (_: string, r: PersistedChatRecord) =>
        new Promise<void>((resolve) => {
          saves.push(r.lastEventId);
          release = resolve;
        }),
      remove: () => {},
    };
    const binding = new PersistenceBinding('c1', store, adapter, () => {});
    binding.start();
    store.setState({ lastEventId: 1 });
    await new Promise((r) => setTimeout(r, 0));
    store.setState({ lastEventId: 2 });
    store.setState({ lastEventId: 3 });
    release();
    await new Promise((r) => setTimeout(r, 0));
    release();
    await binding.flush();
    expect(saves).toEqual([1, 3]);
  });

  it('reports a failing save as a warning', async () => {
    const warnings: string[] = [];
    const store = createSessionStore('c1');
    const adapter = {
      load: () => undefined,
      save: () => Promise.reject(new Error('quota')),
      remove: () => {},
    };
    const binding = new PersistenceBinding('c1', store, adapter, (m) => warnings.push(m));
    binding.start();
    store.setState({ lastEventId: 1 });
    await binding.flush();
    expect(warnings[0]).toContain('could not save');
  });

  it('writes nothing while held (a tab following another tab’s turn); after release the next change writes', async () => {
    const saves: (number | undefined)[] = [];
    const store = createSessionStore('c1');
    const adapter = {
      load: () => undefined,
      save: (_: string, r: PersistedChatRecord) => void saves.push(r.lastEventId),
      remove: () => {},
    };
    const binding = new PersistenceBinding('c1', store, adapter, () => {});
    binding.start();
    const release = binding.hold();
    store.setState({ lastEventId: 3, turns: [{ id: 0, kind: 'found', state: 'stored' }] });
    await binding.flush();
    expect(saves).toEqual([]);
    release();
    release(); // once only: a second call releases nothing more
    await binding.flush();
    expect(saves).toEqual([]); // what changed while held is not written on release
    store.setState({ lastEventId: 4 });
    await binding.flush();
    expect(saves).toEqual([4]);
  });

  it('a hold taken while a save is under way stops the writes that would follow it', async () => {
    const saves: (number | undefined)[] = [];
    const store = createSessionStore('c1');
    let finish: () => void = () => {};
    const adapter = {
      load: () => undefined,
      save: (_: string, r: PersistedChatRecord) =>
        new Promise<void>((resolve) => {
          saves.push(r.lastEventId);
          finish = resolve;
        }),
      remove: () => {},
    };
    const binding = new PersistenceBinding('c1', store, adapter, () => {});
    binding.start();
    store.setState({ lastEventId: 1 });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(saves).toEqual([1]);
    store.setState({ lastEventId: 2 }); // queued behind the save under way
    binding.hold();
    finish();
    await binding.flush();
    expect(saves).toEqual([1]);
  });
});
