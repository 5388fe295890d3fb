import { describe, expect, it } from 'vitest';
import { EVENT_STREAM, HEADER, type OutRecord } from '../../src/protocol/index.js';
import { seqNums } from './support/read-out.js';
import type { GetContext } from './support/suite-context.js';
import { findTurn } from './support/turn.js';

const FIVE_MINUTES = 5 * 60_000;

function expectWellFormed(record: OutRecord): void {
  expect(Number.isSafeInteger(record.seq_num) && record.seq_num >= 0, `seq_num ${record.seq_num}`).toBe(true);
  expect(Number.isInteger(record.timestamp)).toBe(true);
  // Unix ms: within minutes of this machine's clock (seconds would be 1000x off).
  expect(Math.abs(record.timestamp - Date.now())).toBeLessThan(FIVE_MINUTES);
  expect(typeof record.body).toBe('string');
  if (record.headers !== undefined) {
    for (const pair of record.headers) {
      expect(pair).toHaveLength(2);
      expect(pair.every((value) => typeof value === 'string')).toBe(true);
    }
  }
}

export function describeOutStream(context: GetContext): void {
  describe('GET /realtime/v1/sessions/{id}/out', () => {
    it('refuses a caller without Accept: text/event-stream', async () => {
      const chat = await context().openChat();
      for (const accept of [null, 'application/json']) {
        const response = await context().client.outRefusal(chat.externalId, chat.token, accept);
        expect(response.status, `Accept ${accept}: ${response.text.slice(0, 200)}`).toBeGreaterThanOrEqual(
          400,
        );
        expect(response.status).toBeLessThan(500);
        expect(response.headers.get(HEADER.contentType) ?? '').not.toContain(EVENT_STREAM);
      }
    });

    it('answers X-Stream-Version: v2 with batches of records and a tail', async () => {
      const chat = await context().openChat();
      await chat.send('shape');
      const read = await chat.read({ until: (progress) => findTurn(progress.records) !== undefined });
      expect(read.status).toBe(200);
      expect(read.headers.get(HEADER.contentType)).toContain(EVENT_STREAM);
      expect(read.headers.get(HEADER.streamVersion)).toBe('v2');
      expect(read.protocolErrors).toEqual([]);
      const batches = read.events.filter((event) => event.type === 'batch');
      expect(batches.length).toBeGreaterThan(0);
      for (const batch of batches) {
        expect(batch.tail, 'batch tail').toBeDefined();
        const highest = Math.max(...batch.records.map((record) => record.seq_num));
        // The tail is the next position to be written (wire notes: highest + 1 === tail when caught up).
        expect(batch.tail?.seq_num ?? -1).toBeGreaterThan(highest);
        expect(Number.isInteger(batch.tail?.timestamp)).toBe(true);
        batch.records.forEach(expectWellFormed);
      }
      for (const record of read.records) expect(record.kind).not.toBe('malformed');
      for (const [index, raw] of read.raw.entries()) {
        const classified = read.records[index];
        if (classified?.kind === 'data') {
          expect(raw.headers ?? []).toEqual([]);
          expect(JSON.parse(raw.body)).toEqual({ data: expect.any(Object), id: expect.any(String) });
        }
        if (classified?.kind === 'control') expect(raw.body).toBe('');
      }
    });

    it('serves the same records on the session id and the externalId with one token', async () => {
      const chat = await context().openChat();
      const { turn } = await chat.send('both forms');
      const until = (progress: { records: { seqNum: number }[] }) =>
        progress.records.some((record) => record.seqNum === turn.turnComplete.seqNum);
      const byExternal = await chat.read({ session: chat.externalId, until });
      const byId = await chat.read({ session: chat.id, until });
      expect([byExternal.status, byId.status]).toEqual([200, 200]);
      expect(seqNums(byId)).toEqual(seqNums(byExternal));
    });

    it('an idle long poll ends after Timeout-Seconds with [DONE], then the server closes', async () => {
      const chat = await context().openChat();
      const read = await chat.read({ timeoutSeconds: 1, maxMs: 8_000 });
      expect(read.status).toBe(200);
      expect(read.ending).toBe('server-closed');
      expect(read.done).toBe(true);
      expect(read.events.at(-1)?.type).toBe('done');
      expect(read.events.filter((event) => event.type === 'done')).toHaveLength(1);
      expect(read.elapsedMs).toBeGreaterThanOrEqual(900);
    });

    it.each(['0', '601', 'soon', '1.5'])(
      'refuses Timeout-Seconds %s (rule: integer 1-600)',
      async (value) => {
        const chat = await context().openChat();
        const read = await chat.read({ timeoutSeconds: value, maxMs: 8_000 });
        expect(read.status, read.refusalText.slice(0, 200)).toBeGreaterThanOrEqual(400);
        expect(read.status).toBeLessThan(500);
      },
    );

    it('Last-Event-ID n resumes from n + 1', async () => {
      const chat = await context().openChat();
      const { turn } = await chat.send('resume me please, this is long enough for several deltas');
      const all = await chat.read({ until: (progress) => findTurn(progress.records) !== undefined });
      const seqs = seqNums(all);
      expect(seqs.length).toBeGreaterThan(2);
      const middle = seqs[Math.floor(seqs.length / 2)] ?? 0;
      const resumed = await chat.read({
        lastEventId: middle,
        until: (progress) => progress.records.some((record) => record.seqNum === turn.turnComplete.seqNum),
      });
      expect(seqNums(resumed)).toEqual(seqs.filter((seq) => seq > middle));
    });

    it.each(['3,1700000000000,2', 'latest'])(
      'a Last-Event-ID that is not a non-negative integer (%s) starts from the beginning',
      async (value) => {
        const chat = await context().openChat();
        const { turn } = await chat.send('from the start');
        const until = (progress: { records: { seqNum: number }[] }) =>
          progress.records.some((record) => record.seqNum === turn.turnComplete.seqNum);
        const fresh = await chat.read({ until });
        const fallback = await chat.read({ lastEventId: value, until });
        expect(fallback.status).toBe(200);
        expect(seqNums(fallback)).toEqual(seqNums(fresh));
      },
    );

    it('seq_num is strictly increasing across turns', async () => {
      const chat = await context().openChat();
      const first = await chat.send('turn one');
      const second = await chat.send('turn two');
      expect(second.turn.records[0]?.seqNum ?? -1).toBeGreaterThan(first.turn.turnComplete.seqNum);
      const read = await chat.read({
        until: (progress) =>
          progress.records.some((record) => record.seqNum === second.turn.turnComplete.seqNum),
      });
      const seqs = seqNums(read);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      expect(new Set(seqs).size).toBe(seqs.length);
    });

    it('sends pings while idle, with a timestamp and a tail one past the highest seq_num', async () => {
      const { target } = context();
      const chat = await context().openChat();
      await chat.send('then idle');
      const interval = target.options.pingIntervalMs;
      const read = await chat.read({
        lastEventId: chat.cursor,
        timeoutSeconds: Math.ceil((interval * 3) / 1000) + 2,
        until: (progress) => progress.events.some((event) => event.type === 'ping'),
        maxMs: interval * 3 + 4_000,
      });
      expect(read.ending).toBe('until');
      let highest = chat.cursor ?? -1;
      for (const event of read.events) {
        if (event.type === 'batch')
          for (const record of event.records) highest = Math.max(highest, record.seq_num);
        if (event.type !== 'ping') continue;
        expect(typeof event.timestamp).toBe('number');
        expect(event.tail, 'ping tail (wire notes)').toBeDefined();
        expect(event.tail?.seq_num).toBe(highest + 1);
        break;
      }
    });
  });
}
