import { describe, expect, it } from 'vitest';
import { encodeBatch, type JournalBatch, parseJournal } from '../../src/dev-server/store/journal-format.js';
import { replayBatches } from '../../src/dev-server/store/session-state.js';
import type { OutRecord } from '../../src/protocol/types.js';

const PATH = '/data/sessions/session_x/journal.log';

function out(seq: number, body = `{"type":"text-delta","delta":"${seq}"}`): OutRecord {
  return { seq_num: seq, timestamp: 1_000 + seq, body };
}

function bytesOf(...batches: JournalBatch[]): Buffer {
  return Buffer.from(batches.map(encodeBatch).join(''));
}

describe('the session journal format', () => {
  it('reads whole lines back as the batches written, multibyte text and newlines in bodies included', () => {
    const batches: JournalBatch[] = [
      { out: [out(0, '{"delta":"line one\\nline two – ünïcødé 🙂"}')] },
      { out: [out(1), out(2)], trim: 1 },
    ];
    const parsed = parseJournal(bytesOf(...batches), PATH);
    expect(parsed.batches).toEqual(batches);
    expect(parsed.tornBytes).toBe(0);
    expect(parsed.validBytes).toBe(bytesOf(...batches).length);
  });

  it('leaves out a torn last line (a write a kill cut short), wherever it was cut', () => {
    const whole = bytesOf({ out: [out(0)] }, { out: [out(1)] });
    const last = Buffer.from(encodeBatch({ out: [out(2)] }));
    // Every cut of the last write, from one byte to all but its newline.
    for (let cut = 1; cut < last.length; cut++) {
      const parsed = parseJournal(Buffer.concat([whole, last.subarray(0, cut)]), PATH);
      expect(parsed.batches.map((batch) => batch.out?.[0]?.seq_num)).toEqual([0, 1]);
      expect(parsed.validBytes).toBe(whole.length);
      expect(parsed.tornBytes).toBe(cut);
    }
  });

  it('leaves out a last line that ends in a newline but does not parse (a block of zeros, say)', () => {
    const whole = bytesOf({ out: [out(0)] });
    const parsed = parseJournal(Buffer.concat([whole, Buffer.alloc(16), Buffer.from('\n')]), PATH);
    expect(parsed.batches).toHaveLength(1);
    expect(parsed.validBytes).toBe(whole.length);
  });

  it('refuses a damaged line with whole lines after it: no crash leaves that', () => {
    const damaged = Buffer.concat([
      bytesOf({ out: [out(0)] }),
      Buffer.from('{"out":[{"seq_num":1,\n'),
      bytesOf({ out: [out(2)] }),
    ]);
    expect(() => parseJournal(damaged, PATH)).toThrow(
      expect.objectContaining({ code: 'DATA_FOLDER_CORRUPT', path: PATH }),
    );
  });

  it('reads an empty journal as nothing', () => {
    expect(parseJournal(Buffer.alloc(0), PATH)).toEqual({ batches: [], validBytes: 0, tornBytes: 0 });
  });
});

describe('replaying a journal', () => {
  it('applies records, trims and a compacted base in order', () => {
    const replayed = replayBatches(
      [
        {
          base: { outFirstSeq: 5, outLastTimestamp: 1_006, inNextSeq: 3, parts: [['p2', 2]] },
          in: [{ seq: 2, timestamp: 1, partId: 'p2', chunk: { kind: 'stop' } }],
          out: [out(5), out(6)],
        },
        { in: [{ seq: 3, timestamp: 2, partId: 'p3', chunk: { kind: 'stop' } }], out: [out(7)], spent: [3] },
        { trim: 6 },
      ],
      PATH,
    );
    expect(replayed.outFirstSeq).toBe(6);
    expect(replayed.outRecords.map((record) => record.seq_num)).toEqual([6, 7]);
    expect(replayed.outLastTimestamp).toBe(1_007);
    expect(replayed.inNextSeq).toBe(4);
    expect(replayed.inRecords.map((record) => [record.seq, record.spent ?? false])).toEqual([
      [2, false],
      [3, true],
    ]);
    expect([...replayed.parts]).toEqual([
      ['p2', 2],
      ['p3', 3],
    ]);
  });

  it('refuses a gap in .out seq_nums or .in seqs', () => {
    expect(() => replayBatches([{ out: [out(0)] }, { out: [out(2)] }], PATH)).toThrow(
      expect.objectContaining({ code: 'DATA_FOLDER_CORRUPT' }),
    );
    expect(() =>
      replayBatches([{ in: [{ seq: 1, timestamp: 1, partId: 'p', chunk: { kind: 'stop' } }] }], PATH),
    ).toThrow(expect.objectContaining({ code: 'DATA_FOLDER_CORRUPT' }));
  });
});
