import { describe, expect, it } from 'vitest';
import { readTokenClaims, runIdFromScopes } from '../../src/protocol/index.js';
import { createBody } from './support/conformance-chat.js';
import type { GetContext } from './support/suite-context.js';
import { hasContent } from './support/turn.js';

const HOUR_SECONDS = 3600;

function expectAboutAnHour(exp: number | undefined): void {
  expect(exp, 'exp claim').toBeDefined();
  expect(Math.abs((exp ?? 0) - (Date.now() / 1000 + HOUR_SECONDS))).toBeLessThan(120);
}

export function describeTokens(context: GetContext): void {
  describe('tokens and authentication', () => {
    it('publicAccessToken: read and write scopes on the externalId, expiring in 60 minutes', async () => {
      const chat = await context().openChat();
      const claims = readTokenClaims(chat.created.publicAccessToken);
      expect(claims?.scopes).toEqual(
        expect.arrayContaining([`read:sessions:${chat.externalId}`, `write:sessions:${chat.externalId}`]),
      );
      expectAboutAnHour(claims?.exp);
    });

    it('one token appends and reads on the session id and the externalId forms', async () => {
      const { client } = context();
      const chat = await context().openChat();
      const append = await client.append(chat.id, chat.messageChunk('by session id'), { token: chat.token });
      expect(append.status, append.text).toBe(200);
      const turn = await chat.awaitTurn();
      expect(hasContent(turn)).toBe(true);
      const byId = await chat.read({
        session: chat.id,
        until: (progress) => progress.records.some((record) => record.seqNum === turn.turnComplete.seqNum),
      });
      expect(byId.status).toBe(200);
      expect(byId.ending).toBe('until');
    });

    it('turn-complete carries a refreshed token (read:runs of the live run) and session-in-event-id', async () => {
      const chat = await context().openChat();
      const { append, turn } = await chat.send('refresh me');
      const token = turn.turnComplete.publicAccessToken;
      expect(token, 'public-access-token header on a completed turn').toBeDefined();
      const claims = readTokenClaims(token ?? '');
      expect(claims?.scopes).toEqual(
        expect.arrayContaining([`read:sessions:${chat.externalId}`, `write:sessions:${chat.externalId}`]),
      );
      expect(runIdFromScopes(claims?.scopes)).toBe(chat.created.runId);
      expectAboutAnHour(claims?.exp);
      if (context().target.options.turnCorrelation === false) {
        expect(turn.turnComplete.sessionInEventId, 'no session-in-event-id on this target').toBeUndefined();
      } else {
        expect(turn.turnComplete.sessionInEventId, 'session-in-event-id header').toBeDefined();
        expect(turn.turnComplete.sessionInEventId ?? -1).toBeGreaterThanOrEqual(append.body?.seq as number);
      }
      // The refreshed token works like the original.
      const next = await chat.append(chat.messageChunk('with the refreshed token'), { token: token ?? null });
      expect(next.status, next.text).toBe(200);
    });

    it(".out refuses no token, a bad token and another session's token", async () => {
      const { client } = context();
      const chat = await context().openChat();
      const other = await context().openChat();
      for (const token of [null, 'not-a-jwt', other.token]) {
        const response = await client.outRefusal(chat.externalId, token);
        expect([401, 403], `token ${token === null ? 'none' : 'given'}: ${response.text}`).toContain(
          response.status,
        );
      }
    });

    it('create refuses no credential, a wrong secret key and a session token', async () => {
      const { target, client } = context();
      const chat = await context().openChat();
      for (const auth of [null, `${target.secretKey}x`, chat.token]) {
        const response = await client.createSession(createBody(target), auth);
        expect([401, 403], response.text).toContain(response.status);
      }
    });

    it('create accepts a JWT with write:sessions plus tasks:{taskIdentifier}, and no other task', async (test) => {
      const { target, client } = context();
      const mint = target.options.mintToken;
      if (mint === undefined) return test.skip('target cannot mint JWTs (options.mintToken)');
      const good = await mint(['write:sessions', `tasks:${target.taskIdentifier}`]);
      const accepted = await client.createSession(createBody(target), good);
      expect(accepted.status, accepted.text).toBe(201);
      const wrongTask = await mint(['write:sessions', 'tasks:some-other-task']);
      const refused = await client.createSession(createBody(target), wrongTask);
      expect([401, 403], refused.text).toContain(refused.status);
      const noSuperScope = await mint([`tasks:${target.taskIdentifier}`]);
      const refusedToo = await client.createSession(createBody(target), noSuperScope);
      expect([401, 403], refusedToo.text).toContain(refusedToo.status);
    });
  });
}
