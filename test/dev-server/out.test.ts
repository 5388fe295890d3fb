import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type DevServer, echoAgent, startDevServer } from '../../src/dev-server/index.js';
import {
  chunkTypes,
  createSession,
  eventually,
  readOut,
  replyText,
  sendText,
  turnCompletes,
  untilTurnCompletes,
} from './support/client.js';

let server: DevServer;
beforeAll(async () => {
  server = await startDevServer({
    agents: [echoAgent],
    pingIntervalMs: 40,
    trimDelayMs: 60_000,
    peekCloseMs: 50,
    logger: { warn() {} },
  });
});
afterEach(() => {
  server.faults.reset();
  server.faults.setTrimDelay(60_000);
});
afterAll(() => server.close());

async function chatWithTurns(externalId: string, texts: string[]) {
  const created = await createSession(server, { externalId });
  const token = created.body.publicAccessToken;
  for (const text of texts) await sendText(server, externalId, token, externalId, text);
  const read = await readOut(server, externalId, token, { until: untilTurnCompletes(texts.length) });
  return { id: created.body.id, token, chatId: externalId, records: read.records };
}

describe('GET .out', () => {
  it('requires Accept: text/event-stream and a valid Timeout-Seconds', async () => {
    const c = await chatWithTurns('out-accept', []);
    const plain = await fetch(`${server.url}/realtime/v1/sessions/${c.chatId}/out`, {
      headers: { authorization: `Bearer ${c.token}`, accept: 'application/json' },
    });
    expect(plain.status).toBe(406);
    for (const value of ['0', '601', 'soon']) {
      const bad = await fetch(`${server.url}/realtime/v1/sessions/${c.chatId}/out`, {
        headers: {
          authorization: `Bearer ${c.token}`,
          accept: 'text/event-stream',
          'timeout-seconds': value,
        },
      });
      expect(bad.status).toBe(400);
    }
    const denied = await readOut(server, c.chatId, 'nope');
    expect(denied.status).toBe(401);
  });

  it('sends v2 headers, pings with the tail while idle, and ends with [DONE] at the timeout', async () => {
    const c = await chatWithTurns('out-idle', ['hi']);
    const read = await readOut(server, c.chatId, c.token, { timeoutSeconds: 1 });
    expect(read.headers.get('x-stream-version')).toBe('v2');
    expect(read.headers.get('content-type')).toContain('text/event-stream');
    expect(read.ended).toBe('done');
    const pings = read.events.filter((event) => event.type === 'ping');
    expect(pings.length).toBeGreaterThanOrEqual(3);
    const tail = c.records.at(-1)?.seq_num ?? -1;
    for (const ping of pings) expect(ping.type === 'ping' && ping.tail?.seq_num).toBe(tail + 1);
    const batch = read.events.find((event) => event.type === 'batch');
    expect(batch?.type === 'batch' && batch.tail?.seq_num).toBe(tail + 1);
    expect(read.raw).toMatch(/^event: batch\nid: \d+,\d+,\d+\ndata: /);
    expect(read.raw.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  it('resumes after Last-Event-ID, and restarts from the beginning on a non-integer', async () => {
    const c = await chatWithTurns('out-resume', ['one', 'two']);
    const middle = c.records[5]?.seq_num ?? 0;
    const resumed = await readOut(server, c.chatId, c.token, {
      lastEventId: String(middle),
      until: untilTurnCompletes(2),
    });
    expect(resumed.records[0]?.seq_num).toBe(middle + 1);
    expect(resumed.records).toEqual(c.records.slice(6));
    const listForm = await readOut(server, c.chatId, c.token, {
      lastEventId: '5,1700000000000,3',
      until: untilTurnCompletes(2),
    });
    expect(listForm.records[0]?.seq_num).toBe(0);
  });

  it('peek: closes a settled stream quickly with X-Session-Settled, skipping the trailing trim', async () => {
    const c = await chatWithTurns('out-peek', ['one', 'two']);
    expect(chunkTypes(c.records).at(-1)).toBe('command:trim');
    const peek = await readOut(server, c.chatId, c.token, {
      headers: { 'x-peek-settled': '1' },
      timeoutSeconds: 30,
    });
    expect(peek.headers.get('x-session-settled')).toBe('true');
    expect(peek.ended).toBe('done');
    expect(peek.records).toEqual(c.records);
  });

  it('peek: a stream mid-turn is not settled and keeps the normal long poll', async () => {
    const created = await createSession(server, { externalId: 'out-peek-live' });
    const token = created.body.publicAccessToken;
    await sendText(server, 'out-peek-live', token, 'out-peek-live', 'slow', { delayMs: 30, repeat: 3 });
    await eventually(() => ((server.inspect('out-peek-live')?.out.nextSeq ?? 0) > 3 ? true : undefined));
    const peek = await readOut(server, 'out-peek-live', token, {
      headers: { 'x-peek-settled': '1' },
      until: untilTurnCompletes(1),
    });
    expect(peek.headers.get('x-session-settled')).toBeNull();
    expect(replyText(peek.records)).toBe('Echo: slow slow slow');
  });

  it('trims back to the previous turn-complete after the delay; a trimmed cursor clamps forward', async () => {
    const c = await chatWithTurns('out-trim', ['one', 'two']);
    const secondComplete = turnCompletes(c.records)[1]?.seqNum ?? -1;
    server.faults.setTrimDelay(0);
    await sendText(server, c.chatId, c.token, c.chatId, 'three');
    await readOut(server, c.chatId, c.token, {
      lastEventId: String(secondComplete),
      until: untilTurnCompletes(1),
    });
    const info = server.inspect(c.chatId);
    expect(info?.out.oldestSeq).toBe(secondComplete);
    const fromStart = await readOut(server, c.chatId, c.token, {
      lastEventId: '0',
      until: untilTurnCompletes(2),
    });
    expect(fromStart.records[0]?.seq_num).toBe(secondComplete);
    expect(replyText(fromStart.records)).toBe('Echo: three');
  });

  it('keeps records until the trim delay has passed', async () => {
    server.faults.setTrimDelay(100);
    const c = await chatWithTurns('out-trim-later', ['one', 'two']);
    expect(server.inspect(c.chatId)?.out.oldestSeq).toBe(0);
    const firstComplete = turnCompletes(c.records)[0]?.seqNum;
    await eventually(() => (server.inspect(c.chatId)?.out.oldestSeq === firstComplete ? true : undefined));
  });
});

describe('.out faults', () => {
  it('drops the connection after N records; a resume from the cursor loses nothing', async () => {
    const c = await chatWithTurns('fault-drop', ['abcdefghijklmnopqrstuvwxyz']);
    server.faults.dropOutAfter(4);
    const cut = await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(1) });
    expect(cut.ended).toBe('dropped');
    expect(cut.records).toEqual(c.records.slice(0, 4));
    expect(cut.raw).not.toContain('[DONE]');
    const rest = await readOut(server, c.chatId, c.token, {
      lastEventId: String(cut.records.at(-1)?.seq_num),
      until: untilTurnCompletes(1),
    });
    expect([...cut.records, ...rest.records]).toEqual(c.records);
  });

  it('drops in the middle of a frame: the partial frame is never delivered', async () => {
    const c = await chatWithTurns('fault-midframe', ['abcdefghijklmnop']);
    server.faults.dropOutAfter(2, { midFrame: true });
    const cut = await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(1) });
    expect(cut.ended).toBe('dropped');
    expect(cut.records).toEqual(c.records.slice(0, 2));
    expect(cut.raw.endsWith('\n\n')).toBe(false);
  });

  it('sends an error event and closes without [DONE]', async () => {
    const c = await chatWithTurns('fault-error', ['hello']);
    server.faults.sendOutError('storage restarting', { afterRecords: 3 });
    const read = await readOut(server, c.chatId, c.token, { until: untilTurnCompletes(1) });
    expect(read.ended).toBe('error');
    expect(read.records).toHaveLength(3);
    expect(read.events.at(-1)).toEqual({ type: 'error', message: 'storage restarting' });
  });

  it('duplicates already-delivered records at the start of a replay', async () => {
    const c = await chatWithTurns('fault-duplicate', ['hello there']);
    server.faults.duplicateReplay(3);
    const read = await readOut(server, c.chatId, c.token, { lastEventId: '5', until: untilTurnCompletes(1) });
    expect(read.records.map((record) => record.seq_num).slice(0, 5)).toEqual([3, 4, 5, 6, 7]);
    expect(read.records.slice(3)).toEqual(c.records.slice(6));
  });

  it('writes SSE in tiny pieces that decode to the same records (multibyte text included)', async () => {
    const created = await createSession(server, { externalId: 'fault-pieces' });
    const token = created.body.publicAccessToken;
    await sendText(server, 'fault-pieces', token, 'fault-pieces', 'héllo wörld 👋 ünïcode');
    const whole = await readOut(server, 'fault-pieces', token, { until: untilTurnCompletes(1) });
    server.faults.writeSseInPieces(3);
    const pieces = await readOut(server, 'fault-pieces', token, { until: untilTurnCompletes(1) });
    expect(pieces.records).toEqual(whole.records);
    expect(replyText(pieces.records)).toBe('Echo: héllo wörld 👋 ünïcode');
  });
});
