import { expect, it } from 'vitest';
import { createBody, uniqueChatId } from './support/conformance-chat.js';
import type { GetContext } from './support/suite-context.js';

/** A create body the cases may break in any way, as a hostile client would. */
export type Body = Record<string, unknown> & ReturnType<typeof createBody>;
type Mutation = (body: Body) => void;

export function config(body: Body): Record<string, unknown> {
  return body.triggerConfig as unknown as Record<string, unknown>;
}
function base(body: Body): Record<string, unknown> {
  return body.triggerConfig.basePayload as unknown as Record<string, unknown>;
}

const REQUIRED_FIELD_ERRORS: [string, Mutation][] = [
  ['type missing', (body) => Reflect.deleteProperty(body, 'type')],
  ['type not chat.agent', (body) => Object.assign(body, { type: 'chat.other' })],
  ['taskIdentifier missing', (body) => Reflect.deleteProperty(body, 'taskIdentifier')],
  ['taskIdentifier not a string', (body) => Object.assign(body, { taskIdentifier: 42 })],
  ['triggerConfig missing', (body) => Reflect.deleteProperty(body, 'triggerConfig')],
  ['triggerConfig.basePayload missing', (body) => delete config(body).basePayload],
  ['triggerConfig.basePayload not an object', (body) => Object.assign(config(body), { basePayload: 'x' })],
  ['basePayload.chatId missing', (body) => delete base(body).chatId],
  ['basePayload.chatId differs from externalId', (body) => Object.assign(base(body), { chatId: 'other' })],
  ['basePayload.trigger missing', (body) => delete base(body).trigger],
  ['basePayload.trigger unknown', (body) => Object.assign(base(body), { trigger: 'bogus' })],
  // The first run accepts only preload and submit-message.
  [
    'first run with regenerate-message',
    (body) => Object.assign(base(body), { trigger: 'regenerate-message' }),
  ],
  ['first run with action', (body) => Object.assign(base(body), { trigger: 'action', action: {} })],
  ['first run with close', (body) => Object.assign(base(body), { trigger: 'close' })],
  ['first run with handover-prepare', (body) => Object.assign(base(body), { trigger: 'handover-prepare' })],
];

const OPTIONAL_FIELD_ERRORS: [string, Mutation][] = [
  ['externalId not a string', (body) => Object.assign(body, { externalId: 42 })],
  [
    'externalId starting with session_',
    (body) => {
      body.externalId = `session_${uniqueChatId()}`;
      body.triggerConfig.basePayload.chatId = body.externalId;
    },
  ],
  ['tags not an array', (body) => Object.assign(body, { tags: 'a' })],
  ['tags with a non-string', (body) => Object.assign(body, { tags: ['a', 1] })],
  ['11 tags', (body) => Object.assign(body, { tags: Array.from({ length: 11 }, (_, i) => `t${i}`) })],
  ['metadata not an object', (body) => Object.assign(body, { metadata: 'plain' })],
  ['expiresAt not a date', (body) => Object.assign(body, { expiresAt: 'next tuesday' })],
  ['expiresAt not a string', (body) => Object.assign(body, { expiresAt: 42 })],
  ['triggerConfig.machine not a string', (body) => Object.assign(config(body), { machine: 42 })],
  ['triggerConfig.queue not a string', (body) => Object.assign(config(body), { queue: 42 })],
  ['triggerConfig.tags not an array', (body) => Object.assign(config(body), { tags: 'a' })],
  ['triggerConfig.maxAttempts 0', (body) => Object.assign(config(body), { maxAttempts: 0 })],
  ['triggerConfig.maxAttempts 11', (body) => Object.assign(config(body), { maxAttempts: 11 })],
  ['triggerConfig.maxAttempts not a number', (body) => Object.assign(config(body), { maxAttempts: '3' })],
  ['triggerConfig.maxDuration not a number', (body) => Object.assign(config(body), { maxDuration: 'long' })],
  ['triggerConfig.lockToVersion not a string', (body) => Object.assign(config(body), { lockToVersion: 42 })],
  ['triggerConfig.region not a string', (body) => Object.assign(config(body), { region: 42 })],
  [
    'triggerConfig.idleTimeoutInSeconds 0',
    (body) => Object.assign(config(body), { idleTimeoutInSeconds: 0 }),
  ],
  [
    'triggerConfig.idleTimeoutInSeconds 3601',
    (body) => Object.assign(config(body), { idleTimeoutInSeconds: 3601 }),
  ],
  ['basePayload.idleTimeoutInSeconds 0', (body) => Object.assign(base(body), { idleTimeoutInSeconds: 0 })],
  [
    'basePayload.idleTimeoutInSeconds 3601',
    (body) => Object.assign(base(body), { idleTimeoutInSeconds: 3601 }),
  ],
];

const ACCEPTED_BOUNDS: [string, Mutation][] = [
  ['10 tags', (body) => Object.assign(body, { tags: Array.from({ length: 10 }, (_, i) => `t${i}`) })],
  ['maxAttempts 1', (body) => Object.assign(config(body), { maxAttempts: 1 })],
  ['maxAttempts 10', (body) => Object.assign(config(body), { maxAttempts: 10 })],
  ['idleTimeoutInSeconds 1', (body) => Object.assign(config(body), { idleTimeoutInSeconds: 1 })],
  ['idleTimeoutInSeconds 3600', (body) => Object.assign(config(body), { idleTimeoutInSeconds: 3600 })],
];

/** Every required and optional create field, broken one at a time, and the bounds that must pass. */
export function registerCreateValidation(context: GetContext): void {
  it.each(REQUIRED_FIELD_ERRORS)('400 when %s, and nothing is created', async (_, mutate) => {
    const { target, client } = context();
    const body = createBody(target) as Body;
    mutate(body);
    const response = await client.createSession(body);
    expect(response.status, response.text).toBe(400);
    // Nothing was stored: a valid create on the same chat id is fresh (201, not 200).
    const retry = await client.createSession(createBody(target, body.externalId ?? null));
    expect(retry.status, retry.text).toBe(201);
  });

  it.each(OPTIONAL_FIELD_ERRORS)('400 when %s', async (_, mutate) => {
    const { target, client } = context();
    const body = createBody(target) as Body;
    mutate(body);
    const response = await client.createSession(body);
    expect(response.status, response.text).toBe(400);
  });

  it.each(ACCEPTED_BOUNDS)('accepts the bound %s', async (_, mutate) => {
    const { target, client } = context();
    const body = createBody(target) as Body;
    mutate(body);
    const response = await client.createSession(body);
    expect(response.status, response.text).toBe(201);
  });
}
