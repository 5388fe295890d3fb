import { ValidationError } from '../errors/validation-error.js';
import { jsonValueTooDeep, MAX_JSON_DEPTH } from './json-depth.js';
import {
  MAX_APPEND_BODY_BYTES,
  MAX_CLOSE_REASON_LENGTH,
  MAX_IDLE_TIMEOUT_SECONDS,
  MAX_MAX_ATTEMPTS,
  MAX_PART_ID_LENGTH,
  MAX_SESSION_TAGS,
  MAX_STORED_RECORD_BYTES,
  MAX_TIMEOUT_SECONDS,
  MIN_IDLE_TIMEOUT_SECONDS,
  MIN_MAX_ATTEMPTS,
  MIN_TIMEOUT_SECONDS,
  SESSION_ID_PREFIX,
  SESSION_TYPE,
} from './limits.js';
import type { ChatInputChunk, CreateSessionRequest } from './types.js';
import { utf8ByteLength } from './utf8.js';

function invalid(field: string, message: string): never {
  throw new ValidationError({ field, message: `${field}: ${message}` });
}

/** Bad input, not a stack overflow somewhere later (reported as whatever caught it). */
export function validateDepth(value: unknown, field: string): void {
  if (jsonValueTooDeep(value)) invalid(field, `nests deeper than ${MAX_JSON_DEPTH} levels`);
}

function integerIn(field: string, value: unknown, min: number, max: number): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    invalid(field, `must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
}

export interface AppendSize {
  /** UTF-8 bytes of the JSON body as sent. */
  bodyBytes: number;
  /** UTF-8 bytes of the stored record, which wraps the body as a JSON string. */
  storedBytes: number;
}

/** Measures an append body the way the service stores it. */
export function measureAppend(body: string): AppendSize {
  return { bodyBytes: utf8ByteLength(body), storedBytes: utf8ByteLength(JSON.stringify(body)) };
}

/**
 * Serialises a `.in` chunk and checks both ceilings: the 1 MiB body and the 1 MiB stored
 * record (JSON escaping can double a body full of quotes or backslashes). Returns the body.
 */
export function serializeAppend(chunk: ChatInputChunk<never> | ChatInputChunk): string {
  validateDepth(chunk, 'body');
  let body: string;
  try {
    body = JSON.stringify(chunk);
  } catch (cause) {
    // A cycle, a BigInt, or nesting reached through shared objects: the input, not the network.
    throw new ValidationError({
      field: 'body',
      message: `body: cannot be serialised as JSON (${cause instanceof Error ? cause.message : String(cause)})`,
    });
  }
  const { bodyBytes, storedBytes } = measureAppend(body);
  if (bodyBytes > MAX_APPEND_BODY_BYTES) {
    throw new ValidationError({
      code: 'PAYLOAD_TOO_LARGE',
      field: 'body',
      bytes: bodyBytes,
      limit: MAX_APPEND_BODY_BYTES,
      message: `append body is ${bodyBytes} bytes; the limit is ${MAX_APPEND_BODY_BYTES}`,
    });
  }
  if (storedBytes > MAX_STORED_RECORD_BYTES) {
    throw new ValidationError({
      code: 'PAYLOAD_TOO_LARGE',
      field: 'body',
      bytes: storedBytes,
      limit: MAX_STORED_RECORD_BYTES,
      message: `append would be stored as ${storedBytes} bytes once JSON-wrapped; the limit is ${MAX_STORED_RECORD_BYTES}`,
    });
  }
  return body;
}

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * An id that becomes one URL path segment: `.` and `..` would be resolved as dot segments
 * (the request reaching another path, with its credential), and a lone surrogate cannot be
 * percent-encoded at all (`encodeURIComponent` throws `URIError`).
 */
export function validatePathSegment(value: unknown, field: string): asserts value is string {
  if (typeof value !== 'string' || value === '') invalid(field, 'must be a non-empty string');
  if (value === '.' || value === '..') invalid(field, `must not be "${value}"`);
  if (LONE_SURROGATE.test(value)) invalid(field, 'must be well-formed Unicode (it has a lone surrogate)');
}

export function validateExternalId(value: unknown, field = 'externalId'): void {
  validatePathSegment(value, field);
  if (value.startsWith(SESSION_ID_PREFIX)) invalid(field, `must not start with "${SESSION_ID_PREFIX}"`);
}

export function validateTags(value: unknown, field = 'tags'): void {
  if (!Array.isArray(value) || value.some((tag) => typeof tag !== 'string')) {
    invalid(field, 'must be an array of strings');
  }
  if (value.length > MAX_SESSION_TAGS)
    invalid(field, `at most ${MAX_SESSION_TAGS} tags, got ${value.length}`);
}

export function validateMaxAttempts(value: unknown, field = 'triggerConfig.maxAttempts'): void {
  integerIn(field, value, MIN_MAX_ATTEMPTS, MAX_MAX_ATTEMPTS);
}

export function validateIdleTimeout(value: unknown, field = 'idleTimeoutInSeconds'): void {
  integerIn(field, value, MIN_IDLE_TIMEOUT_SECONDS, MAX_IDLE_TIMEOUT_SECONDS);
}

export function validateTimeoutSeconds(value: unknown, field = 'Timeout-Seconds'): void {
  integerIn(field, value, MIN_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS);
}

export function validateCloseReason(value: unknown, field = 'reason'): void {
  if (value === undefined) return;
  if (typeof value !== 'string') invalid(field, 'must be a string');
  if (value.length > MAX_CLOSE_REASON_LENGTH) {
    invalid(field, `at most ${MAX_CLOSE_REASON_LENGTH} characters, got ${value.length}`);
  }
}

/** `Last-Event-ID`: a single non-negative integer. */
export function validateLastEventId(value: unknown, field = 'Last-Event-ID'): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    invalid(field, `must be a non-negative integer, got ${JSON.stringify(value)}`);
  }
}

export function validatePartId(value: unknown, field = 'X-Part-Id'): void {
  if (typeof value !== 'string' || value === '' || value.length > MAX_PART_ID_LENGTH) {
    invalid(field, `must be 1-${MAX_PART_ID_LENGTH} characters`);
  }
  if (!/^[\x21-\x7e]+$/.test(value)) invalid(field, 'must be printable ASCII without spaces');
}

function optionalString(object: Record<string, unknown>, key: string, prefix: string): void {
  if (object[key] !== undefined && typeof object[key] !== 'string')
    invalid(`${prefix}${key}`, 'must be a string');
}

const FIRST_RUN_TRIGGERS = new Set(['preload', 'submit-message']);

/**
 * Checks every field of a create request, required and optional. Throws a
 * `ValidationError` naming the first bad field. The dev server answers 400 with it.
 */
export function validateCreateSessionRequest(value: unknown): asserts value is CreateSessionRequest {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    invalid('body', 'must be a JSON object');
  validateDepth(value, 'body');
  const request = value as Record<string, unknown>;
  if (request.type !== SESSION_TYPE) invalid('type', `must be "${SESSION_TYPE}"`);
  if (typeof request.taskIdentifier !== 'string' || request.taskIdentifier === '') {
    invalid('taskIdentifier', 'must be a non-empty string');
  }
  if (request.externalId !== undefined) validateExternalId(request.externalId);
  if (request.tags !== undefined) validateTags(request.tags);
  if (request.metadata !== undefined) {
    if (
      typeof request.metadata !== 'object' ||
      request.metadata === null ||
      Array.isArray(request.metadata)
    ) {
      invalid('metadata', 'must be a JSON object');
    }
  }
  if (request.expiresAt !== undefined) {
    if (typeof request.expiresAt !== 'string' || Number.isNaN(Date.parse(request.expiresAt))) {
      invalid('expiresAt', 'must be an ISO date string');
    }
  }
  const config = request.triggerConfig;
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    invalid('triggerConfig', 'must be an object');
  }
  const triggerConfig = config as Record<string, unknown>;
  for (const key of ['machine', 'queue', 'lockToVersion', 'region'])
    optionalString(triggerConfig, key, 'triggerConfig.');
  if (triggerConfig.tags !== undefined) validateTags(triggerConfig.tags, 'triggerConfig.tags');
  if (triggerConfig.maxAttempts !== undefined) validateMaxAttempts(triggerConfig.maxAttempts);
  if (triggerConfig.maxDuration !== undefined) {
    const duration = triggerConfig.maxDuration;
    if (typeof duration !== 'number' || !Number.isFinite(duration) || duration <= 0) {
      invalid('triggerConfig.maxDuration', 'must be a positive number of seconds');
    }
  }
  if (triggerConfig.idleTimeoutInSeconds !== undefined) {
    validateIdleTimeout(triggerConfig.idleTimeoutInSeconds, 'triggerConfig.idleTimeoutInSeconds');
  }
  const base = triggerConfig.basePayload;
  if (typeof base !== 'object' || base === null || Array.isArray(base)) {
    invalid('triggerConfig.basePayload', 'must be an object');
  }
  const basePayload = base as Record<string, unknown>;
  if (typeof basePayload.chatId !== 'string' || basePayload.chatId === '') {
    invalid('triggerConfig.basePayload.chatId', 'must be a non-empty string');
  }
  if (request.externalId !== undefined && basePayload.chatId !== request.externalId) {
    invalid('triggerConfig.basePayload.chatId', 'must equal externalId');
  }
  if (typeof basePayload.trigger !== 'string' || !FIRST_RUN_TRIGGERS.has(basePayload.trigger)) {
    invalid('triggerConfig.basePayload.trigger', 'the first run accepts only "preload" or "submit-message"');
  }
  if (basePayload.idleTimeoutInSeconds !== undefined) {
    validateIdleTimeout(basePayload.idleTimeoutInSeconds, 'triggerConfig.basePayload.idleTimeoutInSeconds');
  }
  if (basePayload.message !== undefined)
    validateMessageShape(basePayload.message, 'triggerConfig.basePayload.message');
}

/** A UI message needs an id, a role and a parts array; the agent checks the rest. */
export function validateMessageShape(value: unknown, field = 'message'): void {
  if (typeof value !== 'object' || value === null) invalid(field, 'must be an object');
  const message = value as Record<string, unknown>;
  if (typeof message.id !== 'string' || message.id === '')
    invalid(`${field}.id`, 'must be a non-empty string');
  if (message.role !== 'user' && message.role !== 'assistant' && message.role !== 'system') {
    invalid(`${field}.role`, 'must be "user", "assistant" or "system"');
  }
  if (!Array.isArray(message.parts)) invalid(`${field}.parts`, 'must be an array');
}

/** Checks a `.in` chunk's shape (the dev server uses this on every append). */
export function validateInputChunk(value: unknown): asserts value is ChatInputChunk {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    invalid('body', 'must be a JSON object');
  validateDepth(value, 'body');
  const chunk = value as Record<string, unknown>;
  if (chunk.kind === 'stop') {
    if (chunk.message !== undefined && typeof chunk.message !== 'string')
      invalid('message', 'must be a string');
    return;
  }
  if (chunk.kind !== 'message') invalid('kind', 'must be "message" or "stop"');
  const payload = chunk.payload as Record<string, unknown> | null | undefined;
  if (typeof payload !== 'object' || payload === null) invalid('payload', 'must be an object');
  if (typeof payload.chatId !== 'string' || payload.chatId === '')
    invalid('payload.chatId', 'must be a non-empty string');
  const triggers = ['submit-message', 'regenerate-message', 'preload', 'close', 'action', 'handover-prepare'];
  if (typeof payload.trigger !== 'string' || !triggers.includes(payload.trigger)) {
    invalid('payload.trigger', `must be one of ${triggers.join(', ')}`);
  }
  if (payload.message !== undefined) validateMessageShape(payload.message, 'payload.message');
  if (payload.trigger === 'submit-message' && payload.message === undefined) {
    invalid('payload.message', 'submit-message needs a message');
  }
  if (payload.headStartMessages !== undefined && !Array.isArray(payload.headStartMessages)) {
    invalid('payload.headStartMessages', 'must be an array');
  }
}
