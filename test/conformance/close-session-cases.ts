import { describe, expect, it } from 'vitest';
import { stopChunk } from '../../src/protocol/index.js';
import type { GetContext } from './support/suite-context.js';

function expectRefused(status: number, text: string): void {
  expect([401, 403], `status ${status}: ${text.slice(0, 200)}`).toContain(status);
}

export function describeCloseSession(context: GetContext): void {
  describe('POST /api/v1/sessions/{id}/close', () => {
    it('closes with a reason; closing again keeps the original closedAt and closedReason', async () => {
      const { client } = context();
      const chat = await context().openChat();
      const first = await client.closeSession(chat.id, { reason: 'user left' });
      expect(first.status, first.text).toBeGreaterThanOrEqual(200);
      expect(first.status).toBeLessThan(300);

      const second = await client.closeSession(chat.id, { reason: 'a different reason' });
      expect(second.status, second.text).toBeLessThan(300);
      expect(second.body?.id).toBe(chat.id);
      expect(second.body?.closedReason).toBe('user left');
      expect(second.body?.closedAt).toBeTruthy();

      const third = await client.closeSession(chat.id);
      expect(third.status, third.text).toBeLessThan(300);
      expect(third.body?.closedReason).toBe('user left');
      expect(third.body?.closedAt).toEqual(second.body?.closedAt);
    });

    it('accepts no body and a reason of exactly 256 characters', async () => {
      const { client } = context();
      const bare = await context().openChat();
      expect((await client.closeSession(bare.id)).status).toBeLessThan(300);
      const long = await context().openChat();
      const response = await client.closeSession(long.id, { reason: 'r'.repeat(256) });
      expect(response.status, response.text).toBeLessThan(300);
      const again = await client.closeSession(long.id);
      expect(again.body?.closedReason).toBe('r'.repeat(256));
    });

    it('400 for a reason over 256 characters, and the session stays open', async () => {
      const { client } = context();
      const chat = await context().openChat();
      const response = await client.closeSession(chat.id, { reason: 'r'.repeat(257) });
      expect(response.status, response.text).toBe(400);
      const append = await chat.append(chat.messageChunk('still open?'));
      expect(append.status, append.text).toBe(200);
    });

    it('refuses no credential and the session token (no admin scope); the session stays open', async () => {
      const { client } = context();
      const chat = await context().openChat();
      const anonymous = await client.closeSession(chat.id, {}, null);
      expectRefused(anonymous.status, anonymous.text);
      const withSessionToken = await client.closeSession(chat.id, {}, chat.token);
      expectRefused(withSessionToken.status, withSessionToken.text);
      const append = await chat.append(chat.messageChunk('still open'));
      expect(append.status, append.text).toBe(200);
    });

    it('accepts a JWT with admin:sessions:{id} or admin:sessions', async (test) => {
      const { target, client } = context();
      const mint = target.options.mintToken;
      if (mint === undefined) return test.skip('target cannot mint JWTs (options.mintToken)');
      const one = await context().openChat();
      const scoped = await client.closeSession(
        one.id,
        { reason: 'admin' },
        await mint([`admin:sessions:${one.id}`]),
      );
      expect(scoped.status, scoped.text).toBeLessThan(300);
      const other = await context().openChat();
      const wrongId = await client.closeSession(other.id, {}, await mint([`admin:sessions:${one.id}`]));
      expectRefused(wrongId.status, wrongId.text);
      const all = await client.closeSession(other.id, {}, await mint(['admin:sessions']));
      expect(all.status, all.text).toBeLessThan(300);
    });

    it('after close: appends answer 409 session_closed with closedReason; reads still work', async () => {
      const { client } = context();
      const chat = await context().openChat();
      const { turn } = await chat.send('before close');
      expect((await client.closeSession(chat.id, { reason: 'finished' })).status).toBeLessThan(300);

      for (const chunk of [chat.messageChunk('after close'), stopChunk()]) {
        const append = await chat.append(chunk);
        expect(append.status, append.text).toBe(409);
        expect(append.body?.ok).toBe(false);
        expect(append.body?.error).toMatch(/closed/i);
        expect(append.body?.code).toBe('session_closed');
        expect(append.body?.closedReason).toBe('finished');
      }

      const read = await chat.read({ timeoutSeconds: 1, maxMs: 5_000 });
      expect(read.status).toBe(200);
      expect(read.records.map((record) => record.seqNum)).toContain(turn.turnComplete.seqNum);
    });
  });
}
