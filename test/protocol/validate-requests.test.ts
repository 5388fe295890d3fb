import { describe, expect, it } from 'vitest';
import {
  validateCreateSessionRequest,
  validateInputChunk,
  validateMessageShape,
} from '../../src/protocol/index.js';
import { rejects, tags } from './validation-fixtures.js';

const validRequest = () => ({
  type: 'chat.agent',
  taskIdentifier: 'support-agent',
  externalId: 'chat-1',
  tags: tags(10),
  metadata: { plan: 'pro' },
  expiresAt: '2027-01-01T00:00:00.000Z',
  triggerConfig: {
    basePayload: {
      chatId: 'chat-1',
      trigger: 'submit-message',
      message: { id: 'm1', role: 'user', parts: [{ type: 'text', text: 'hi' }] },
      idleTimeoutInSeconds: 3600,
    },
    machine: 'small-1x',
    queue: 'q',
    tags: tags(10),
    maxAttempts: 10,
    maxDuration: 300,
    lockToVersion: '20260101.1',
    region: 'eu',
    idleTimeoutInSeconds: 1,
  },
});

type Mutation = (request: ReturnType<typeof validRequest>) => void;
const set =
  (path: string, value: unknown): Mutation =>
  (request) => {
    const keys = path.split('.');
    let target = request as unknown as Record<string, unknown>;
    for (const key of keys.slice(0, -1)) target = target[key] as Record<string, unknown>;
    target[keys[keys.length - 1] ?? ''] = value;
  };

describe('validateCreateSessionRequest', () => {
  it('accepts a full valid request and a minimal one', () => {
    expect(() => validateCreateSessionRequest(validRequest())).not.toThrow();
    const minimal = {
      type: 'chat.agent',
      taskIdentifier: 't',
      triggerConfig: { basePayload: { chatId: 'c', trigger: 'preload' } },
    };
    expect(() => validateCreateSessionRequest(minimal)).not.toThrow();
  });

  it.each([
    ['type', set('type', 'chat'), 'type'],
    ['empty taskIdentifier', set('taskIdentifier', ''), 'taskIdentifier'],
    ['externalId with the session_ prefix', set('externalId', 'session_1'), 'externalId'],
    ['11 tags', set('tags', tags(11)), 'tags'],
    ['metadata array', set('metadata', []), 'metadata'],
    ['expiresAt not a date', set('expiresAt', 'next week'), 'expiresAt'],
    ['triggerConfig missing', set('triggerConfig', undefined), 'triggerConfig'],
    ['machine not a string', set('triggerConfig.machine', 2), 'triggerConfig.machine'],
    ['11 run tags', set('triggerConfig.tags', tags(11)), 'triggerConfig.tags'],
    ['maxAttempts 0', set('triggerConfig.maxAttempts', 0), 'triggerConfig.maxAttempts'],
    ['maxAttempts 11', set('triggerConfig.maxAttempts', 11), 'triggerConfig.maxAttempts'],
    ['maxDuration 0', set('triggerConfig.maxDuration', 0), 'triggerConfig.maxDuration'],
    [
      'idle timeout 3601',
      set('triggerConfig.idleTimeoutInSeconds', 3601),
      'triggerConfig.idleTimeoutInSeconds',
    ],
    ['idle timeout 0', set('triggerConfig.idleTimeoutInSeconds', 0), 'triggerConfig.idleTimeoutInSeconds'],
    ['basePayload missing', set('triggerConfig.basePayload', null), 'triggerConfig.basePayload'],
    [
      'chatId missing',
      set('triggerConfig.basePayload.chatId', undefined),
      'triggerConfig.basePayload.chatId',
    ],
    [
      'chatId not the externalId',
      set('triggerConfig.basePayload.chatId', 'chat-2'),
      'triggerConfig.basePayload.chatId',
    ],
    [
      'first-run trigger action',
      set('triggerConfig.basePayload.trigger', 'action'),
      'triggerConfig.basePayload.trigger',
    ],
    [
      'payload idle timeout 0',
      set('triggerConfig.basePayload.idleTimeoutInSeconds', 0),
      'triggerConfig.basePayload.idleTimeoutInSeconds',
    ],
    [
      'message without parts',
      set('triggerConfig.basePayload.message.parts', undefined),
      'triggerConfig.basePayload.message.parts',
    ],
  ])('rejects %s', (_name, mutate, field) => {
    const request = validRequest();
    mutate(request);
    rejects(() => validateCreateSessionRequest(request), field);
  });

  it('rejects a body that is not an object', () => {
    for (const body of [null, [], 'x']) rejects(() => validateCreateSessionRequest(body), 'body');
  });
});

describe('validateMessageShape and validateInputChunk', () => {
  it('needs an id, a known role and a parts array', () => {
    expect(() => validateMessageShape({ id: 'm', role: 'assistant', parts: [] })).not.toThrow();
    rejects(() => validateMessageShape(null), 'message');
    rejects(() => validateMessageShape({ id: '', role: 'user', parts: [] }), 'message.id');
    rejects(() => validateMessageShape({ id: 'm', role: 'tool', parts: [] }), 'message.role');
    rejects(() => validateMessageShape({ id: 'm', role: 'user', parts: {} }), 'message.parts');
  });

  const message = { id: 'm', role: 'user', parts: [] };
  it.each([
    ['a stop', { kind: 'stop' }],
    ['a stop with a message', { kind: 'stop', message: 'enough' }],
    ['a user message', { kind: 'message', payload: { chatId: 'c', trigger: 'submit-message', message } }],
    ['an action', { kind: 'message', payload: { chatId: 'c', trigger: 'action', action: { x: 1 } } }],
    [
      'a head start',
      {
        kind: 'message',
        payload: { chatId: 'c', trigger: 'handover-prepare', headStartMessages: [message] },
      },
    ],
  ])('accepts %s', (_name, chunk) => {
    expect(() => validateInputChunk(chunk)).not.toThrow();
  });

  it.each([
    ['not an object', [], 'body'],
    ['stop message not a string', { kind: 'stop', message: 1 }, 'message'],
    ['unknown kind', { kind: 'data' }, 'kind'],
    ['no payload', { kind: 'message' }, 'payload'],
    ['no chatId', { kind: 'message', payload: { trigger: 'preload' } }, 'payload.chatId'],
    ['unknown trigger', { kind: 'message', payload: { chatId: 'c', trigger: 'submit' } }, 'payload.trigger'],
    [
      'submit without message',
      { kind: 'message', payload: { chatId: 'c', trigger: 'submit-message' } },
      'payload.message',
    ],
    [
      'bad message',
      { kind: 'message', payload: { chatId: 'c', trigger: 'submit-message', message: { id: 'm' } } },
      'payload.message.role',
    ],
    [
      'history not an array',
      { kind: 'message', payload: { chatId: 'c', trigger: 'handover-prepare', headStartMessages: message } },
      'payload.headStartMessages',
    ],
  ])('rejects %s', (_name, chunk, field) => {
    rejects(() => validateInputChunk(chunk), field);
  });
});
