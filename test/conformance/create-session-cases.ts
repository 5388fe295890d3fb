import { describe, expect, it } from 'vitest';
import { type CreateSessionResponse, readTokenClaims } from '../../src/protocol/index.js';
import { type Body, config, registerCreateValidation } from './create-validation-cases.js';
import { createBody, uniqueChatId, userMessage } from './support/conformance-chat.js';
import type { GetContext } from './support/suite-context.js';
import { hasContent } from './support/turn.js';

export function describeCreateSession(context: GetContext): void {
  describe('POST /api/v1/sessions', () => {
    it('creates: 201, the session row, runId, publicAccessToken, isCached false, run JWT headers', async () => {
      const { target, client } = context();
      const body = createBody(target) as Body;
      const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
      Object.assign(body, { tags: ['conformance', 'create'], metadata: { plan: 'pro', n: 1 }, expiresAt });
      Object.assign(config(body), {
        machine: 'small-1x',
        queue: 'conformance',
        tags: ['run-tag'],
        maxAttempts: 3,
        maxDuration: 300,
        idleTimeoutInSeconds: 60,
      });
      const response = await client.createSession(body);
      expect(response.status, response.text).toBe(201);
      const row = response.body as unknown as CreateSessionResponse;
      expect(row.id).toMatch(/^session_/);
      expect(row.externalId).toBe(body.externalId);
      expect(row.type).toBe('chat.agent');
      expect(row.taskIdentifier).toBe(target.taskIdentifier);
      expect(row.triggerConfig).toMatchObject(body.triggerConfig);
      expect(row.currentRunId).toMatch(/^run_/);
      expect(row.runId).toBe(row.currentRunId);
      expect(row.tags).toEqual(['conformance', 'create']);
      expect(row.metadata).toEqual({ plan: 'pro', n: 1 });
      expect(row.closedAt).toBeNull();
      expect(row.closedReason).toBeNull();
      expect(Date.parse(row.expiresAt ?? '')).toBe(Date.parse(expiresAt));
      for (const stamp of [row.createdAt, row.updatedAt]) {
        expect(stamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d/);
        expect(Number.isNaN(Date.parse(stamp))).toBe(false);
      }
      expect(row.isCached).toBe(false);
      expect(readTokenClaims(row.publicAccessToken)?.scopes).toBeDefined();

      const runJwt = response.headers.get('x-trigger-jwt');
      expect(runJwt, 'x-trigger-jwt header').toBeTruthy();
      expect(readTokenClaims(runJwt ?? '')?.scopes ?? []).toContain(`read:runs:${row.runId}`);
      const claims = JSON.parse(response.headers.get('x-trigger-jwt-claims') ?? 'null') as {
        sub?: unknown;
        scopes?: unknown;
      } | null;
      expect(typeof claims?.sub).toBe('string');
      expect(claims?.scopes).toEqual(expect.arrayContaining([`read:runs:${row.runId}`]));
    });

    registerCreateValidation(context);

    it('refuses an unknown taskIdentifier (4xx)', async () => {
      const { target, client } = context();
      const body = createBody(target) as Body;
      body.taskIdentifier = `no-such-task-${uniqueChatId()}`;
      const response = await client.createSession(body);
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
    });

    it('without externalId every call creates a new session', async () => {
      const { target, client } = context();
      const body = createBody(target, null);
      const first = await client.createSession(body);
      const second = await client.createSession(body);
      expect([first.status, second.status]).toEqual([201, 201]);
      expect(first.body?.externalId).toBeNull();
      expect(second.body?.id).not.toBe(first.body?.id);
      expect(second.body?.runId).not.toBe(first.body?.runId);
    });

    it('repeat on a live session: 200, isCached true, same id and runId, a fresh 60-minute token', async () => {
      const { target, client } = context();
      const body = createBody(target);
      const first = await client.createSession(body);
      expect(first.status).toBe(201);
      const second = await client.createSession(body);
      expect(second.status, second.text).toBe(200);
      const row = second.body as unknown as CreateSessionResponse;
      const original = first.body as unknown as CreateSessionResponse;
      expect(row.isCached).toBe(true);
      expect(row.id).toBe(original.id);
      expect(row.runId).toBe(original.runId);
      const firstExp = readTokenClaims(original.publicAccessToken)?.exp ?? 0;
      const exp = readTokenClaims(row.publicAccessToken)?.exp ?? 0;
      expect(exp).toBeGreaterThanOrEqual(firstExp);
      expect(Math.abs(exp - (Date.now() / 1000 + 3600))).toBeLessThan(120);
    });

    it('a cached call writes the tags, metadata, expiresAt and triggerConfig it sends to the row', async () => {
      const { target, client } = context();
      const body = createBody(target) as Body;
      expect((await client.createSession(body)).status).toBe(201);
      const expiresAt = new Date(Date.now() + 7 * 86_400_000).toISOString();
      Object.assign(body, { tags: ['second'], metadata: { version: 2 }, expiresAt });
      Object.assign(config(body), { machine: 'micro', maxAttempts: 2 });
      const response = await client.createSession(body);
      expect(response.status, response.text).toBe(200);
      const row = response.body as unknown as CreateSessionResponse;
      expect(row.tags).toEqual(['second']);
      expect(row.metadata).toEqual({ version: 2 });
      expect(Date.parse(row.expiresAt ?? '')).toBe(Date.parse(expiresAt));
      expect(row.triggerConfig).toMatchObject({ machine: 'micro', maxAttempts: 2 });
    });

    it('a cached call drops basePayload.message: no turn answers it, while .in does', async () => {
      const { target, client } = context();
      const chat = await context().openChat();
      const body = createBody(target, chat.externalId);
      Object.assign(body.triggerConfig.basePayload, {
        trigger: 'submit-message',
        message: userMessage('cached'),
      });
      const cached = await client.createSession(body);
      expect(cached.status, cached.text).toBe(200);
      const quiet = await chat.read({ timeoutSeconds: 2, maxMs: 6_000 });
      expect(quiet.records.filter((record) => record.kind === 'data')).toEqual([]);
      // The agent is alive: the same text through .in is answered.
      const { turn } = await chat.send('through .in');
      expect(hasContent(turn)).toBe(true);
    });

    it('a first run with submit-message answers the message in basePayload', async () => {
      const chat = await context().openChat((body) => {
        Object.assign(body.triggerConfig.basePayload, {
          trigger: 'submit-message',
          message: userMessage('first message'),
        });
      });
      const turn = await chat.awaitTurn();
      expect(hasContent(turn)).toBe(true);
    });

    it('409 on a closed session', async () => {
      const { target, client } = context();
      const chat = await context().openChat();
      const closed = await client.closeSession(chat.id, { reason: 'done' });
      expect(closed.status).toBeLessThan(300);
      const again = await client.createSession(createBody(target, chat.externalId));
      expect(again.status, again.text).toBe(409);
    });
  });
}
