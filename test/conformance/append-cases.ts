import { describe, expect, it } from 'vitest';
import {
  MAX_APPEND_BODY_BYTES,
  MAX_STORED_RECORD_BYTES,
  measureAppend,
  stopChunk,
  userMessageChunk,
} from '../../src/protocol/index.js';
import { createBody, uniqueChatId, userMessage } from './support/conformance-chat.js';
import type { GetContext } from './support/suite-context.js';
import { findTurn, hasContent } from './support/turn.js';

const ORIGIN = 'http://localhost:5173';

export function describeAppend(context: GetContext): void {
  describe('POST /realtime/v1/sessions/{id}/in/append', () => {
    it('200 {ok: true, seq}; seq grows with each append', async () => {
      const chat = await context().openChat();
      const first = await chat.send('one');
      expect(first.append.body?.ok).toBe(true);
      if (context().target.options.turnCorrelation === false) {
        expect(first.append.body?.seq, 'a target without turn correlation sends no seq').toBeUndefined();
        return;
      }
      expect(Number.isInteger(first.append.body?.seq)).toBe(true);
      const second = await chat.send('two');
      expect(second.append.body?.seq).toBeGreaterThan(first.append.body?.seq as number);
    });

    it('401 without Authorization and with a token that is not valid', async () => {
      const chat = await context().openChat();
      for (const token of [null, 'not-a-jwt', `${chat.token.slice(0, -4)}AAAA`]) {
        const response = await chat.append(chat.messageChunk('hello'), { token });
        expect(response.status, response.text).toBe(401);
        expect(response.body?.ok).toBe(false);
        expect(typeof response.body?.error).toBe('string');
      }
    });

    it("403 with another session's token, on both URL forms", async () => {
      const { client } = context();
      const chat = await context().openChat();
      const other = await context().openChat();
      for (const session of [chat.externalId, chat.id]) {
        const response = await client.append(session, chat.messageChunk('hello'), { token: other.token });
        expect(response.status, response.text).toBe(403);
        expect(response.body?.ok).toBe(false);
        expect(typeof response.body?.error).toBe('string');
      }
    });

    it('the run token from x-trigger-jwt can neither append nor read', async () => {
      const { target, client } = context();
      const body = createBody(target);
      const created = await client.createSession(body);
      const runToken = created.headers.get('x-trigger-jwt') ?? '';
      expect(runToken).not.toBe('');
      const chatId = body.externalId ?? '';
      const append = await client.append(
        chatId,
        userMessageChunk({ chatId, message: userMessage('hi'), metadata: target.options.metadata }),
        { token: runToken },
      );
      expect([401, 403], append.text).toContain(append.status);
      const read = await client.outRefusal(chatId, runToken);
      expect([401, 403], read.text).toContain(read.status);
    });

    it('413 over 1 MiB of body, with CORS headers; nothing is stored', async () => {
      const chat = await context().openChat();
      const chunk = chat.messageChunk('a'.repeat(MAX_APPEND_BODY_BYTES));
      expect(measureAppend(JSON.stringify(chunk)).bodyBytes).toBeGreaterThan(MAX_APPEND_BODY_BYTES);
      const response = await context().client.append(chat.externalId, chunk, {
        token: chat.token,
        headers: { origin: ORIGIN },
      });
      expect(response.status, response.text.slice(0, 200)).toBe(413);
      expect(response.body?.ok).toBe(false);
      expect(typeof response.body?.error).toBe('string');
      expect(response.headers.get('access-control-allow-origin')).toBeTruthy();
      const { turn } = await chat.send('small');
      expect(hasContent(turn)).toBe(true);
    });

    it('413 for a body under 1 MiB whose stored record (quotes and backslashes escaped) is over the ceiling', async () => {
      const chat = await context().openChat();
      const chunk = chat.messageChunk('"\\'.repeat(180_000));
      const size = measureAppend(JSON.stringify(chunk));
      expect(size.bodyBytes).toBeLessThan(MAX_APPEND_BODY_BYTES);
      expect(size.storedBytes).toBeGreaterThan(MAX_STORED_RECORD_BYTES);
      const response = await chat.append(chunk);
      expect(response.status, response.text.slice(0, 200)).toBe(413);
      expect(response.body?.ok).toBe(false);
    });

    it('a body just under both ceilings is accepted', async () => {
      const chat = await context().openChat();
      // A stop chunk: the agent has nothing to stream back for it, unlike a 1 MiB user message.
      const chunk = stopChunk('b'.repeat(MAX_APPEND_BODY_BYTES - 4_096));
      const size = measureAppend(JSON.stringify(chunk));
      expect(size.storedBytes).toBeLessThanOrEqual(MAX_STORED_RECORD_BYTES);
      const response = await chat.append(chunk);
      expect(response.status, response.text.slice(0, 200)).toBe(200);
    });

    it('X-Part-Id makes the append idempotent: same seq, stored and answered once', async () => {
      const chat = await context().openChat();
      const partId = uniqueChatId('part').slice(0, 60);
      const chunk = chat.messageChunk('only once');
      const first = await chat.append(chunk, { partId });
      const retry = await chat.append(chunk, { partId });
      expect([first.status, retry.status]).toEqual([200, 200]);
      expect(retry.body?.seq).toBe(first.body?.seq);
      const turn = await chat.awaitTurn();
      expect(hasContent(turn)).toBe(true);
      // A second stored copy would be answered right away; the stream stays free of data.
      const after = await chat.read({ lastEventId: chat.cursor, timeoutSeconds: 2, maxMs: 6_000 });
      expect(after.records.filter((record) => record.kind === 'data')).toEqual([]);
      expect(findTurn(after.records)).toBeUndefined();
    });

    it('refuses a body that is not a ChatInputChunk with 4xx, ok false and an error', async () => {
      const chat = await context().openChat();
      for (const body of ['{not json', { kind: 'bogus' }, { kind: 'message' }]) {
        const response = await chat.append(body);
        expect(response.status, response.text).toBeGreaterThanOrEqual(400);
        expect(response.status).toBeLessThan(500);
        expect(response.body?.ok).toBe(false);
        expect(typeof response.body?.error).toBe('string');
      }
    });

    it('accepts a message with trigger close (its behaviour is not specified)', async () => {
      const { target } = context();
      const chat = await context().openChat();
      const chunk = {
        kind: 'message',
        payload: { chatId: chat.externalId, trigger: 'close', metadata: target.options.metadata },
      };
      const response = await chat.append(chunk);
      expect(response.status, response.text).toBe(200);
      expect(response.body?.ok).toBe(true);
    });
  });
}
